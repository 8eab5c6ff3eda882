/** Durable NATS consumer of built tree heads (`audit.tree.>`): each one is recorded as pending for the next anchor. */
import { type Bus, type Logger, type RunningConsumer, TreeBuiltEventSchema, consumeDurable, streams } from '@agw/shared';
import type { AnchorRepository } from '../anchoring/anchor.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX64 = /^[0-9a-f]{64}$/;

export function consumeTreeHeads(bus: Bus, repo: AnchorRepository, logger: Logger): Promise<RunningConsumer> {
  const p = bus.prefix ? `${bus.prefix}.` : '';
  return consumeDurable(bus, {
    stream: streams(bus.prefix).audit.name,
    durable: 'anchor-tree-heads',
    filterSubject: `${p}audit.tree.>`,
    schema: TreeBuiltEventSchema,
    logger,
    handle: async (e) => {
      if (!UUID.test(e.tenant_id) || !HEX64.test(e.merkle_root) || e.record_count < 1 || e.tree_index < 0) {
        // a malformed head can never be anchored: acknowledge it (no endless redelivery) and say so
        logger.error({ subject: `audit.tree.${e.tenant_id}`, tree_index: e.tree_index }, 'dropping a malformed tree-built event');
        return;
      }
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
