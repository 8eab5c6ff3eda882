/** Publishes a built tree head on NATS (`audit.tree.<tenant>`, stream AUDIT) for the anchor service. */
import { type Bus, type TreeBuiltEvent, publishEvent, subjects } from '@agw/shared';
import type { TreeHead } from './merkle.repository';
import type { TreeBuiltSink } from './tree-builder';

export class TreeBuiltPublisher implements TreeBuiltSink {
  constructor(private readonly bus: Bus) {}

  async treeBuilt(head: TreeHead): Promise<void> {
    const event: TreeBuiltEvent = {
      event_id: `tree-${head.tenant_id}-${head.tree_index}`,
      tenant_id: head.tenant_id,
      tree_index: head.tree_index,
      merkle_root: head.merkle_root,
      record_count: head.tree_size,
      period_start: head.period_start,
      period_end: head.period_end,
    };
    await publishEvent(this.bus, subjects.treeBuilt(this.bus.prefix, head.tenant_id), event);
  }
}
