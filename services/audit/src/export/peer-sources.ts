/** gRPC adapters of the export's ports: anchor references (anchor service) and the policy snapshot (policy service). */
import type { anchor } from '@agw/proto';
import type { PeerClient } from '@agw/shared';
import type { AnchorReference, AnchorReferenceSource, PolicySnapshotSource } from './compliance-exporter';

export type AnchorClient = PeerClient<'anchor'>;
export type PolicyClient = PeerClient<'policy'>;

export function toAnchorReference(a: anchor.TenantAnchor): AnchorReference {
  return {
    tree_index: a.treeIndex,
    tree_size: a.treeSize,
    tenant_root: a.tenantRoot,
    aggregate_root: a.aggregateRoot,
    leaf_index: a.leafIndex,
    leaf_count: a.leafCount,
    aggregate_proof: a.aggregateProof,
    tx_hash: a.txHash,
    block_number: a.blockNumber,
    anchored_at: a.anchoredAt,
    network: a.network,
    chain_id: a.chainId,
    contract_address: a.contractAddress,
    explorer_tx_url: a.explorerTxUrl || null,
    checkpoint_sha256: a.checkpointSha256 || null,
  };
}

export class GrpcAnchorReferences implements AnchorReferenceSource {
  constructor(private readonly client: AnchorClient) {}

  async listAnchors(tenantId: string): Promise<AnchorReference[]> {
    const r = await this.client.listAnchors({ tenantId, requestedChain: '' });
    return r.anchors.map(toAnchorReference);
  }
}

export class GrpcPolicySnapshot implements PolicySnapshotSource {
  constructor(private readonly client: PolicyClient) {}

  async snapshot(tenantId: string): Promise<Record<string, unknown>> {
    const p = await this.client.getTenantPolicy({ tenantId });
    return {
      status: 'ok',
      policy_template: p.policyTemplate || 'general',
      policy_config: p.policyConfigJson ? JSON.parse(p.policyConfigJson) : {},
      custom_policy: p.customPolicy || null,
      bundle_revision: p.bundle?.revision ?? null,
      captured_at: new Date().toISOString(),
    };
  }
}
