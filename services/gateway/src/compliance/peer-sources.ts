/**
 * gRPC adapters of the export's ports: the audit part (audit service, ComplianceService.GetEvidence), anchor
 * references (anchor service) and the policy snapshot (policy service).
 */
import type { anchor } from '@agw/proto';
import type { DecisionInputRow } from '@agw/shared';
import type { AnchorReference, AuditEvidence } from '@agw/verifier';
import type { AnchorClient, ComplianceClient, PolicyClient } from '../clients/grpc-clients';
import type { AnchorReferenceSource, AuditEvidenceSource, ExportFormat, PolicySnapshotSource } from './compliance-export';

export class GrpcAuditEvidence implements AuditEvidenceSource {
  constructor(private readonly client: Pick<ComplianceClient, 'getEvidence'>) {}

  async evidence(tenantId: string, q: { from: string; to: string; format: ExportFormat }): Promise<{ pkg: AuditEvidence; inputs: DecisionInputRow[] }> {
    const r = await this.client.getEvidence({ tenantId, from: q.from, to: q.to, format: q.format });
    const inputs = r.decisionInputsJson.length ? (JSON.parse(Buffer.from(r.decisionInputsJson).toString()) as DecisionInputRow[]) : [];
    return { pkg: JSON.parse(Buffer.from(r.packageJson).toString()) as AuditEvidence, inputs };
  }
}

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
  constructor(private readonly client: Pick<AnchorClient, 'listAnchors'>) {}

  async listAnchors(tenantId: string): Promise<AnchorReference[]> {
    const r = await this.client.listAnchors({ tenantId, requestedChain: '' });
    return r.anchors.map(toAnchorReference);
  }
}

export class GrpcPolicySnapshot implements PolicySnapshotSource {
  constructor(private readonly client: Pick<PolicyClient, 'getTenantPolicy'>) {}

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
