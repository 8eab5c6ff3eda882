/**
 * The tree-built sink of the audit service: after a tree head's commit, sign the tenant's pending
 * checkpoints (fork-checked) and send the latest to the witnesses (witnessing.ts), then hand the head on (NATS, for the anchor service). A signing failure
 * never holds the head back: it is logged and the checkpoint is signed on the next build or read.
 */
import type { Logger } from '@agw/shared';
import type { TreeHead } from '../merkle/merkle.repository';
import type { TreeBuiltSink } from '../merkle/tree-builder';
import type { Checkpoints } from './checkpoints';
import type { Witnessing } from './witnessing';

export class CheckpointingSink implements TreeBuiltSink {
  constructor(
    private readonly checkpoints: Checkpoints,
    private readonly next: TreeBuiltSink,
    private readonly logger: Logger,
    private readonly witnessing?: Witnessing,
  ) {}

  async treeBuilt(head: TreeHead): Promise<void> {
    try {
      // the tenant's latest checkpoint (`latest` signs the pending ones first) to its witnesses, also one a
      // witness missed while it was down; a witness answers within WITNESS_TIMEOUT_MS, and the head goes on after
      if (this.witnessing?.configured) await this.witnessing.cosign(head.tenant_id, await this.checkpoints.latest(head.tenant_id));
      else await this.checkpoints.signPending(head.tenant_id);
    } catch (e) {
      this.logger.warn({ err: e, tenantId: head.tenant_id, tree_index: head.tree_index }, 'checkpoint not signed after the build; retried on the next build or read');
    }
    await this.next.treeBuilt(head);
  }
}
