/**
 * The upper levels of the tenants' Merkle trees in memory, for proofs (issue 26).
 *
 * A stored node is a perfect subtree `(level, index)`: the hash of leaves `[index·2^level, (index+1)·2^level)`.
 * The chain is append-only, so a node never changes once written, and the upper levels are few: a
 * 1,000,000-leaf tree has about 7,800 nodes at level 8 and above, against 2,000,000 in all. An inclusion
 * proof of such a tree needs ~20-30 nodes, more than half of them at level 8 or above, each a random read
 * of `merkle_nodes` (a table larger than Postgres' buffers). Keeping those nodes leaves the proof's query
 * with the few low nodes near its leaf.
 *
 * Only what a proof read from committed rows is kept (never a build's own transaction), bounded by a
 * least-recently-used count over all tenants. A node could only change under a restore of an older backup
 * (the chain then continues differently from the restore point); every proof is verified before it is
 * served, and a proof that fails with cached nodes drops the tenant's cache and is made again from the
 * table (MerkleProofs).
 */
import { nodeKey } from './merkle.repository';
import type { NodeKey } from './rfc9162';

export interface UpperNodeCacheOptions {
  /** the lowest level kept (level 0 = leaves) */
  minLevel: number;
  /** at most this many nodes over all tenants (about 350 bytes each, measured: 50,000 take ~17 MB) */
  maxNodes: number;
}

export const DEFAULT_UPPER_NODE_CACHE: UpperNodeCacheOptions = { minLevel: 8, maxNodes: 50_000 };

const entryKey = (tenantId: string, k: NodeKey): string => `${tenantId}|${nodeKey(k)}`;

export class UpperNodeCache {
  /** insertion order = recency: a hit moves its entry to the end, eviction takes from the front */
  private readonly entries = new Map<string, Buffer>();

  constructor(private readonly opts: UpperNodeCacheOptions = DEFAULT_UPPER_NODE_CACHE) {}

  get size(): number {
    return this.entries.size;
  }

  /** The keys found here (by `nodeKey`, as MerkleRepository.nodes answers), and those to read. */
  lookup(tenantId: string, keys: NodeKey[]): { found: Map<string, Buffer>; missing: NodeKey[] } {
    const found = new Map<string, Buffer>();
    const missing: NodeKey[] = [];
    for (const k of keys) {
      if (k.level < this.opts.minLevel) {
        missing.push(k);
        continue;
      }
      const key = entryKey(tenantId, k);
      const hash = this.entries.get(key);
      if (hash === undefined) {
        missing.push(k);
        continue;
      }
      this.entries.delete(key);
      this.entries.set(key, hash);
      found.set(nodeKey(k), hash);
    }
    return { found, missing };
  }

  /** Keeps the upper-level nodes among `keys`, whose hashes `nodes` holds as read from committed rows (by `nodeKey`). */
  remember(tenantId: string, keys: NodeKey[], nodes: Map<string, Buffer>): void {
    for (const k of keys) {
      if (k.level < this.opts.minLevel) continue;
      const hash = nodes.get(nodeKey(k));
      if (hash !== undefined) this.entries.set(entryKey(tenantId, k), hash);
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.opts.maxNodes) break;
      this.entries.delete(key);
    }
  }

  /** Drops every node of the tenant (a proof made with them did not verify). */
  forget(tenantId: string): void {
    const prefix = `${tenantId}|`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}
