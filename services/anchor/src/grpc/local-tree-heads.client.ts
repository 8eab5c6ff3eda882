/** The audit service's tree heads over gRPC (LocalTreeHeads port of AnchorService.verify). */
import type { PeerClient } from '@agw/shared';
import type { LocalTreeHeads } from '../anchoring/anchor-service';

export type MerkleClient = PeerClient<'merkle'>;

export class GrpcLocalTreeHeads implements LocalTreeHeads {
  constructor(private readonly client: MerkleClient) {}

  async rootAt(tenantId: string, treeIndex: number): Promise<string | undefined> {
    const { trees } = await this.client.listTreeHeads({ tenant_id: tenantId });
    return trees.find((t) => t.tree_index === treeIndex)?.merkle_root;
  }

  /** SHA-256 of the tenant's signed checkpoint of this size (the audit service signs what is pending first). */
  checkpointDigest = async (tenantId: string, treeSize: number): Promise<string | undefined> => {
    const c = await this.client.getCheckpoint({ tenant_id: tenantId, tree_size: treeSize });
    return c.tree_size === treeSize ? c.checkpoint_sha256 : undefined;
  };
}
