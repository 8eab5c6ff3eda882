/** Durable NATS consumer of built tree heads (`audit.tree.>`): each one is recorded as pending for the next anchor. */
import { type Bus, type Logger, type RunningConsumer, TreeBuiltEventSchema, consumeDurable, streams } from '@agw/shared';
import type { AnchorRepository } from '../anchoring/anchor.repository';

export function consumeTreeHeads(bus: Bus, repo: AnchorRepository, logger: Logger): Promise<RunningConsumer> {
  const p = bus.prefix ? `${bus.prefix}.` : '';
  return consumeDurable(bus, {
    stream: streams(bus.prefix).audit.name,
    durable: 'anchor-tree-heads',
    filterSubject: `${p}audit.tree.>`,
    schema: TreeBuiltEventSchema,
    logger,
    handle: async (e) => {
      await repo.recordTreeHead(e.tenant_id, {
        tree_index: e.tree_index,
        tree_size: e.record_count,
        merkle_root: e.merkle_root,
        period_start: e.period_start,
        period_end: e.period_end,
      });
    },
  });
}
