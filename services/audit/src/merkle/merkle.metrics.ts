/** Prometheus metrics of the Merkle build (served on the audit service's /metrics). */
import { Counter, Histogram, type Registry } from '@agw/shared';

export interface MerkleMetrics {
  headsBuilt: Counter<'built_by'>;
  leavesAdded: Counter<'built_by'>;
  buildSeconds: Histogram<'built_by'>;
}

export function createMerkleMetrics(registry: Registry): MerkleMetrics {
  return {
    headsBuilt: new Counter({ name: 'agw_merkle_tree_heads_built_total', help: 'Merkle tree heads built', labelNames: ['built_by'], registers: [registry] }),
    leavesAdded: new Counter({ name: 'agw_merkle_leaves_added_total', help: 'audit records added to Merkle trees', labelNames: ['built_by'], registers: [registry] }),
    buildSeconds: new Histogram({ name: 'agw_merkle_build_seconds', help: 'duration of one build run (all tenants)', labelNames: ['built_by'], buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120], registers: [registry] }),
  };
}
