/** gRPC adapters of the export's ports: anchor references (anchor service) and the policy snapshot (policy service). */
import type { anchor } from '@agw/proto';
import type { PeerClient } from '@agw/shared';
import type { AnchorReference, AnchorReferenceSource, PolicySnapshotSource } from './compliance-exporter';

export type AnchorClient = PeerClient<'anchor'>;
export type PolicyClient = PeerClient<'policy'>;

export function toAnchorReference(a: anchor.TenantAnchor): AnchorReference {
  return {
    tree_index: a.tree_index,
    tree_size: a.tree_size,
    tenant_root: a.tenant_root,
    aggregate_root: a.aggregate_root,
    leaf_index: a.leaf_index,
    leaf_count: a.leaf_count,
    aggregate_proof: a.aggregate_proof,
    tx_hash: a.tx_hash,
    block_number: a.block_number,
    anchored_at: a.anchored_at,
    network: a.network,
    chain_id: a.chain_id,
    contract_address: a.contract_address,
    explorer_tx_url: a.explorer_tx_url || null,
    checkpoint_sha256: a.checkpoint_sha256 || null,
  };
}

export class GrpcAnchorReferences implements AnchorReferenceSource {
  constructor(private readonly client: AnchorClient) {}

  async listAnchors(tenantId: string): Promise<AnchorReference[]> {
    const r = await this.client.listAnchors({ tenant_id: tenantId, requested_chain: '' });
    return r.anchors.map(toAnchorReference);
  }
}

export class GrpcPolicySnapshot implements PolicySnapshotSource {
  constructor(private readonly client: PolicyClient) {}

  async snapshot(tenantId: string): Promise<Record<string, unknown>> {
    const p = await this.client.getTenantPolicy({ tenant_id: tenantId });
    return {
      status: 'ok',
      policy_template: p.policy_template || 'general',
      policy_config: p.policy_config_json ? JSON.parse(p.policy_config_json) : {},
      custom_policy: p.custom_policy || null,
      bundle_revision: p.bundle?.revision ?? null,
      captured_at: new Date().toISOString(),
    };
  }
}
