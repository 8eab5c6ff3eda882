/**
 * The compliance export of one tenant (docs/compliance-export.md), the fleet's one reader that calls the
 * audit, anchor and policy services: the audit service answers its part of the package (records in the
 * range, chain verification, Merkle summary, sample proofs, checkpoint evidence), the anchor service the
 * anchor references, the policy service the policy snapshot. This module puts the package together in the
 * document's order and renders it: JSON is the package itself, the PDF renders the same package, `ocsf`
 * and `opa` are JSON Lines of its records and decisions. When the anchor or policy service is down its
 * section says `unavailable` instead of failing the whole export; without the audit service there is no export.
 */
import type { DecisionInputRow } from '@agw/shared';
import { type PresentedRecord, toApiActivity, toJsonLines } from '@agw/ocsf';
import type { AnchorReference, AuditEvidence, ComplianceExport } from '@agw/verifier';
import { renderCompliancePdf } from './compliance-pdf.renderer';
import { opaDecisionEvents, toOpaLines } from './opa-decision-log';

/** The audit service's part of the package, and with format=opa the replay inputs of its records' actions. */
export interface AuditEvidenceSource {
  evidence(tenantId: string, q: { from: string; to: string; format: ExportFormat }): Promise<{ pkg: AuditEvidence; inputs: DecisionInputRow[] }>;
}

export interface AnchorReferenceSource {
  listAnchors(tenantId: string): Promise<AnchorReference[]>;
}

export interface PolicySnapshotSource {
  snapshot(tenantId: string): Promise<Record<string, unknown>>;
}

export type ExportFormat = 'json' | 'pdf' | 'ocsf' | 'opa';
const FORMATS: Record<ExportFormat, { ext: string; type: string }> = {
  json: { ext: 'json', type: 'application/json' },
  pdf: { ext: 'pdf', type: 'application/pdf' },
  ocsf: { ext: 'ocsf.jsonl', type: 'application/x-ndjson' },
  opa: { ext: 'opa-decisions.jsonl', type: 'application/x-ndjson' },
};
const PRODUCT_VERSION: string = (require('../../package.json') as { version: string }).version;
/** The export's records as OCSF API Activity events, one per line (docs/evidence.md, "OCSF for the SIEM"). */
const ocsfLines = (p: ComplianceExport) =>
  toJsonLines(p.audit_records.map((r) => toApiActivity(r as unknown as PresentedRecord, { tenantId: p.package.tenant_id, productVersion: PRODUCT_VERSION })));
/** The tenant's current template and revision from the policy snapshot (absent when the policy service was away). */
const currentPolicy = (p: ComplianceExport): { template: string; revision: string | null } | undefined => {
  const s = p.policy_snapshot as Record<string, unknown>;
  return s.status === 'ok' && typeof s.policy_template === 'string' ? { template: s.policy_template, revision: typeof s.bundle_revision === 'string' ? s.bundle_revision : null } : undefined;
};
const failure = (e: unknown) => (e instanceof Error ? e.message : String(e));

export interface ExportResult {
  content: Buffer;
  contentType: string;
  filename: string;
}

export class ComplianceExporter {
  constructor(
    private readonly d: {
      audit: AuditEvidenceSource;
      anchors: AnchorReferenceSource;
      policy: PolicySnapshotSource;
      /** largest document (bytes): fewer records are listed beyond it (EXPORT_MAX_BYTES) */
      maxBytes: number;
    },
  ) {}

  async export(tenantId: string, q: { from?: string; to?: string; format: ExportFormat }): Promise<ExportResult> {
    const { pkg, inputs } = await this.build(tenantId, q);
    const day = pkg.package.generated_at.slice(0, 10);
    const render = (p: ComplianceExport) =>
      q.format === 'pdf' ? renderCompliancePdf(p)
      : q.format === 'ocsf' ? Promise.resolve(Buffer.from(ocsfLines(p)))
      : q.format === 'opa' ? Promise.resolve(Buffer.from(toOpaLines(opaDecisionEvents(p.audit_records, inputs, { tenantId, productVersion: PRODUCT_VERSION, current: currentPolicy(p) }))))
      : Promise.resolve(Buffer.from(JSON.stringify(p, null, 1)));
    // list fewer records (summary still counts all) until the document fits
    let content = await render(pkg);
    while (content.length > this.d.maxBytes && pkg.audit_records.length > 0) {
      pkg.audit_records = pkg.audit_records.slice(0, Math.floor(pkg.audit_records.length * 0.7));
      pkg.summary.records_exported = pkg.audit_records.length;
      pkg.summary.truncated = true;
      content = await render(pkg);
    }
    const { ext, type } = FORMATS[q.format];
    return { content, contentType: type, filename: `compliance-export-${tenantId}-${day}.${ext}` };
  }

  /** The whole package: the audit part with the anchors and the policy snapshot, in the document's order. */
  async build(tenantId: string, q: { from?: string; to?: string; format: ExportFormat }): Promise<{ pkg: ComplianceExport; inputs: DecisionInputRow[] }> {
    const [audit, anchors, policy] = await Promise.all([
      this.d.audit.evidence(tenantId, { from: q.from ?? '', to: q.to ?? '', format: q.format }),
      this.d.anchors.listAnchors(tenantId).then(
        (references) => ({ status: 'ok', references }),
        (e: unknown) => ({ status: 'unavailable', references: [] as AnchorReference[], error: failure(e) }),
      ),
      this.d.policy.snapshot(tenantId).catch((e: unknown) => ({ status: 'unavailable', error: failure(e) })),
    ]);
    const a = audit.pkg;
    const first = anchors.references[0];
    const chain = { chain_id: first?.chain_id ?? null, contract_address: first?.contract_address ?? null, network: first?.network ?? null };
    const pkg: ComplianceExport = {
      package: a.package,
      summary: a.summary,
      audit_records: a.audit_records,
      chain_verification: a.chain_verification,
      merkle: a.merkle,
      anchors,
      sample_inclusion_proofs: a.sample_inclusion_proofs,
      policy_snapshot: policy,
      evidence: { ...a.evidence, chain },
    };
    return { pkg, inputs: audit.inputs };
  }
}
