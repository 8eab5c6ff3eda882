/** Prometheus metrics of anchoring (served on the anchor service's /metrics). */
import { Counter, Histogram, type Registry } from '@agw/shared';

export interface AnchorMetrics {
  transactions: Counter<'network' | 'outcome'>;
  headsAnchored: Counter<'network'>;
  transactionSeconds: Histogram<'network'>;
}

export function createAnchorMetrics(registry: Registry): AnchorMetrics {
  return {
    transactions: new Counter({ name: 'agw_anchor_transactions_total', help: 'anchor transactions by outcome (anchored | failed)', labelNames: ['network', 'outcome'], registers: [registry] }),
    headsAnchored: new Counter({ name: 'agw_anchor_tree_heads_anchored_total', help: 'tenant tree heads covered by anchored roots', labelNames: ['network'], registers: [registry] }),
    transactionSeconds: new Histogram({ name: 'agw_anchor_transaction_seconds', help: 'time from sending an anchor transaction to its receipt', labelNames: ['network'], buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120], registers: [registry] }),
  };
}
