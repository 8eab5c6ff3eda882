/**
 * gRPC adapters of the export's ports: the audit part (audit service, ComplianceService.GetEvidence), anchor
 * references (anchor service) and the policy snapshot (policy service).
 */
import type { anchor } from '@agw/proto';
import { type DecisionInputRow, fromAnswerJson, jsonOf, objectFromAnswerJson } from '@agw/shared';
import type { AnchorReference, AuditEvidence } from '@agw/verifier';
import type { AnchorClient, ComplianceClient, PolicyClient } from '../clients/grpc-clients';
import type { AnchorReferenceSource, AuditEvidenceSource, ExportFormat, PolicySnapshotSource } from './compliance-export';

export class GrpcAuditEvidence implements AuditEvidenceSource {
  constructor(private readonly client: Pick<ComplianceClient, 'getEvidence'>) {}

  async evidence(tenantId: string, q: { from: string; to: string; format: ExportFormat }): Promise<{ pkg: AuditEvidence; inputs: DecisionInputRow[] }> {
    const r = await this.client.getEvidence({ tenant_id: tenantId, from: q.from, to: q.to, format: q.format });
    const inputs = fromAnswerJson({ text: Buffer.from(r.decision_inputs_json).toString() }, 'decision_inputs_json', []) as DecisionInputRow[];
    return { pkg: objectFromAnswerJson({ text: Buffer.from(r.package_json).toString() }, 'package_json') as unknown as AuditEvidence, inputs };
  }
}

/**
 * An anchor as the export lists it: the message's own fields (one set of names), but for the aggregate
 * batch's internals (`batch_id`, `leaf_hex`), with the optional texts as null when empty.
 */
export function toAnchorReference({ batch_id: _batch, leaf_hex: _leaf, ...a }: anchor.TenantAnchor): AnchorReference {
  return { ...a, explorer_tx_url: a.explorer_tx_url || null, checkpoint_sha256: a.checkpoint_sha256 || null };
}

export class GrpcAnchorReferences implements AnchorReferenceSource {
  constructor(private readonly client: Pick<AnchorClient, 'listAnchors'>) {}

  async listAnchors(tenantId: string): Promise<AnchorReference[]> {
    const r = await this.client.listAnchors({ tenant_id: tenantId, requested_chain: '' });
    return r.anchors.map(toAnchorReference);
  }
}

export class GrpcPolicySnapshot implements PolicySnapshotSource {
  constructor(private readonly client: Pick<PolicyClient, 'getTenantPolicy'>) {}

  async snapshot(tenantId: string): Promise<Record<string, unknown>> {
    const p = await this.client.getTenantPolicy({ tenant_id: tenantId });
    return {
      status: 'ok',
      policy_template: p.policy_template || 'general',
      policy_config: objectFromAnswerJson(jsonOf(p, 'policy_config'), 'policy_config'),
      custom_policy: p.custom_policy || null,
      bundle_revision: p.bundle?.revision ?? null,
      captured_at: new Date().toISOString(),
    };
  }
}
