/**
 * The compliance export package of one tenant: audit records in the range, hash chain verification,
 * Merkle summary, anchor references with explorer links, sample inclusion proofs and the policy
 * snapshot (docs/compliance-export.md). JSON is the package itself; the PDF renders the same package.
 * Anchor references and the policy snapshot come from peer services through ports; when a peer is
 * down the section says `unavailable` instead of failing the whole export.
 */
import { type DecisionInputRow, InputError, presentStoredRecord } from '@agw/shared';
import type { AuditChain } from '../chain/audit-chain';
import type { StoredRecord } from '../chain/audit-record.repository';
import type { MerkleProofs } from '../merkle/merkle-proofs';
import type { Checkpoints } from '../checkpoints/checkpoints';
import { type CosignatureRepository, cosignedNote } from '../checkpoints/witnessing';
import type { TreeHead } from '../merkle/merkle.repository';
import { type PresentedRecord, toApiActivity, toJsonLines } from '@agw/ocsf';
import { renderCompliancePdf } from './compliance-pdf.renderer';
import { opaDecisionEvents, toOpaLines } from './opa-decision-log';
import type { ExportRepository } from './export.repository';
// the document's one type is the verifier's (packages/verifier/src/export-format.ts): writer and reader agree by construction
import type { AnchorReference, ComplianceExport, ExportEvidence, ExportedRecord, SampleInclusionProof } from '@agw/verifier';

export type { AnchorReference, ComplianceExport } from '@agw/verifier';

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
/** The export's records as OCSF API Activity events, one per line (docs/evidence.md, "OCSF for the SIEM"). */
const ocsfLines = (p: ComplianceExport) =>
  toJsonLines(p.audit_records.map((r) => toApiActivity(r as unknown as PresentedRecord, { tenantId: p.package.tenant_id, productVersion: PRODUCT_VERSION })));
/** The tenant's current template and revision from the policy snapshot (absent when the policy service was away). */
const currentPolicy = (p: ComplianceExport): { template: string; revision: string | null } | undefined => {
  const s = p.policy_snapshot as Record<string, unknown>;
  return s.status === 'ok' && typeof s.policy_template === 'string' ? { template: s.policy_template, revision: typeof s.bundle_revision === 'string' ? s.bundle_revision : null } : undefined;
};
const PRODUCT_VERSION: string = (require('../../package.json') as { version: string }).version;

/** The replay inputs committed with the records (chain/decision-input.repository.ts). */
export interface DecisionInputSource {
  byActions(tenantId: string, actionIds: readonly string[]): Promise<DecisionInputRow[]>;
}
/** most action ids per look-up (DecisionInputRepository's MAX_DECISION_INPUTS) */
const INPUTS_PER_LOOKUP = 1000;

export interface ExportResult {
  content: Buffer;
  contentType: string;
  filename: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A `from`/`to` query value: a date (YYYY-MM-DD, UTC) or an ISO 8601 timestamp. `to` as a date includes that day. */
export function parseBound(value: string | undefined, field: 'from' | 'to'): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const ok = DATE.test(value) || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const d = new Date(DATE.test(value) ? `${value}T00:00:00.000Z` : value);
  // a day that does not exist (2020-02-30) is refused, not rolled over to the next month
  const [y, m, day] = value.slice(0, 10).split('-').map(Number);
  const calendar = new Date(Date.UTC(y, m - 1, day));
  const exists = calendar.getUTCFullYear() === y && calendar.getUTCMonth() === m - 1 && calendar.getUTCDate() === day;
  if (!ok || !exists || Number.isNaN(d.getTime())) throw InputError.at(['query', field], `${field} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp with time zone`, 'datetime_parsing');
  if (field === 'to' && DATE.test(value)) return new Date(d.getTime() + 86_400_000);
  return d;
}

/** A tree head in the package; from/to_record_id are the tenant's record ids (merkle.repository.ts TreeHead). */
const presentHead = (h: TreeHead) => ({
  tree_index: h.tree_index,
  merkle_root: h.merkle_root,
  record_count: h.tree_size,
  records_added: h.records_added,
  from_record_id: h.from_record_id,
  to_record_id: h.to_record_id,
  period_start: h.period_start,
  period_end: h.period_end,
});

/**
 * `id` is the tenant's record id, leaf_index + 1 (presentStoredRecord); the global row key is not exported.
 * presentStoredRecord writes `id`, `prev_hash` and `record_hash`, and `leaf_index` is passed to it.
 */
const presentRecord = (r: StoredRecord) => presentStoredRecord(r, { leaf_index: r.tenant_seq }) as ExportedRecord;

export class ComplianceExporter {
  constructor(
    private readonly d: {
      chain: AuditChain;
      records: ExportRepository;
      proofs: MerkleProofs;
      checkpoints?: Checkpoints;
      /** the witnesses' cosignatures of the checkpoints (docs/evidence.md, "Witnesses") */
      cosignatures?: CosignatureRepository;
      verifierKey?: (tenantId: string) => Promise<{ vkey: string; key_name: string }>;
      anchors: AnchorReferenceSource;
      policy: PolicySnapshotSource;
      /** the replay inputs, for the OPA decision log (format=opa) */
      decisionInputs?: DecisionInputSource;
      maxRecords: number;
      sampleProofs: number;
      /** largest document (bytes); gRPC messages are limited to 16 MB */
      maxBytes: number;
    },
  ) {}

  async export(tenantId: string, q: { from?: string; to?: string; format: ExportFormat }): Promise<ExportResult> {
    const pkg = await this.build(tenantId, q);
    const day = pkg.package.generated_at.slice(0, 10);
    const inputs = q.format === 'opa' ? await this.inputsOf(tenantId, pkg) : [];
    const render = (p: ComplianceExport) =>
      q.format === 'pdf' ? renderCompliancePdf(p)
      : q.format === 'ocsf' ? Promise.resolve(Buffer.from(ocsfLines(p)))
      : q.format === 'opa' ? Promise.resolve(Buffer.from(toOpaLines(opaDecisionEvents(p.audit_records, inputs, { tenantId, productVersion: PRODUCT_VERSION, current: currentPolicy(p) }))))
      : Promise.resolve(Buffer.from(JSON.stringify(p, null, 1)));
    // the document travels in one gRPC message: list fewer records (summary still counts all) until it fits
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

  async build(tenantId: string, q: { from?: string; to?: string }): Promise<ComplianceExport> {
    const now = new Date();
    const from = parseBound(q.from, 'from') ?? new Date(0);
    const to = parseBound(q.to, 'to') ?? new Date(now.getTime() + 1);
    if (from.getTime() > to.getTime()) throw InputError.at(['query', 'from'], 'from must not be after to', 'value_error');

    const [records, stats, verification, heads, anchors, policy] = await Promise.all([
      this.d.records.records(tenantId, from, to, this.d.maxRecords),
      this.d.records.stats(tenantId, from, to),
      this.d.chain.verify(tenantId),
      this.d.proofs.listHeads(tenantId),
      this.d.anchors.listAnchors(tenantId).then(
        (references) => ({ status: 'ok', references }),
        (e: unknown) => ({ status: 'unavailable', references: [] as AnchorReference[], error: e instanceof Error ? e.message : String(e) }),
      ),
      this.d.policy.snapshot(tenantId).catch((e: unknown) => ({ status: 'unavailable', error: e instanceof Error ? e.message : String(e) })),
    ]);
    const latest = heads[heads.length - 1];
    const inRange = heads.filter((h) => Date.parse(h.period_end) >= from.getTime() && Date.parse(h.period_start) < to.getTime());
    const samples: SampleInclusionProof[] = [];
    if (latest) {
      const covered = records.filter((r) => r.tenant_seq < latest.tree_size);
      const picks = new Set<number>();
      const k = Math.min(this.d.sampleProofs, covered.length);
      for (let i = 0; i < k; i++) picks.add(k === 1 ? 0 : Math.round((i * (covered.length - 1)) / (k - 1)));
      for (const i of picks) {
        const p = await this.d.proofs.inclusionAt(tenantId, covered[i], latest);
        samples.push({
          record_id: p.record_id,
          record_hash: p.record_hash,
          leaf_index: p.leaf_index,
          leaf_hash: p.leaf_hash,
          tree_index: p.tree.tree_index,
          tree_size: p.tree.tree_size,
          merkle_root: p.tree.merkle_root,
          proof: p.proof,
          verified: p.verified,
        });
      }
    }
    const evidence = await this.evidence(tenantId, heads, anchors.references);
    return {
      package: {
        // 1.2: every record id (audit_records[].id, sample_inclusion_proofs[].record_id, the heads' from/to_record_id,
        // chain_verification.failed_at_record_id) is the tenant's, leaf_index + 1; before, the global row key
        format_version: '1.2',
        standard: 'AGCS v0.9',
        generated_at: now.toISOString(),
        tenant_id: tenantId,
        range: { from: from.toISOString(), to: to.toISOString() },
      },
      summary: { ...stats, records_exported: records.length, truncated: stats.total > records.length },
      audit_records: records.map(presentRecord),
      chain_verification: {
        ...verification,
        verified_at: now.toISOString(),
        scope: 'the whole chain of the tenant (GENESIS to the latest record)',
        algorithm: 'record_hash = SHA-256(UTF-8(JCS(content)) || UTF-8(prev_hash)); first prev_hash = "GENESIS"',
      },
      merkle: {
        algorithm: 'RFC 9162 (SHA-256): leaf = SHA-256(0x00 || leaf), node = SHA-256(0x01 || left || right)',
        leaf: 'the 32 raw bytes of record_hash; leaf index = the record\'s 0-based position in the tenant chain; the record\'s id = leaf index + 1',
        tree_heads_total: heads.length,
        latest_tree: latest ? presentHead(latest) : null,
        trees_in_range: inRange.map(presentHead),
      },
      anchors,
      sample_inclusion_proofs: samples,
      policy_snapshot: policy,
      evidence,
    };
  }

  /** The replay inputs of the exported records' actions. */
  private async inputsOf(tenantId: string, p: ComplianceExport): Promise<DecisionInputRow[]> {
    if (!this.d.decisionInputs) return [];
    const ids = [...new Set(p.audit_records.map((r) => String(r.action_id)))];
    const out: DecisionInputRow[] = [];
    for (let i = 0; i < ids.length; i += INPUTS_PER_LOOKUP) out.push(...(await this.d.decisionInputs.byActions(tenantId, ids.slice(i, i + INPUTS_PER_LOOKUP))));
    return out;
  }

  /** Checkpoints, verifier key, consistency proofs between successive heads, chain id and contract. */
  private async evidence(tenantId: string, heads: TreeHead[], anchors: AnchorReference[]): Promise<ExportEvidence> {
    const first = anchors[0];
    const chain = { chain_id: first?.chain_id ?? null, contract_address: first?.contract_address ?? null, network: first?.network ?? null };
    const treeHeads = heads.map((h) => ({ tree_index: h.tree_index, tree_size: h.tree_size, merkle_root: h.merkle_root }));
    const consistency: ExportEvidence['consistency_proofs'] = [];
    for (let i = 1; i < heads.length; i++) {
      const p = await this.d.proofs.consistency(tenantId, heads[i - 1].tree_index, heads[i].tree_index);
      consistency.push({ from_size: p.first.tree_size, to_size: p.second.tree_size, proof: p.proof });
    }
    const base = { tree_heads: treeHeads, consistency_proofs: consistency, chain };
    if (!this.d.checkpoints || !this.d.verifierKey) return { status: 'unavailable', error: 'checkpoint signing is not configured', checkpoints: [], verifier_key: null, origin: null, ...base };
    try {
      const [list, key] = await Promise.all([this.d.checkpoints.list(tenantId), this.d.verifierKey(tenantId)]);
      const cosigs = await this.d.cosignatures?.ofSizes(tenantId, list.map((c) => c.tree_size));
      return {
        status: 'ok',
        checkpoints: list.map((c) => ({ tree_index: c.tree_index, tree_size: c.tree_size, merkle_root: c.merkle_root, checkpoint_sha256: c.checkpoint_sha256, note: c.note, cosigned_note: cosignedNote(c.note, cosigs?.get(c.tree_size) ?? []) })),
        verifier_key: key.vkey,
        origin: key.key_name,
        ...base,
      };
    } catch (e) {
      return { status: 'unavailable', error: e instanceof Error ? e.message : String(e), checkpoints: [], verifier_key: null, origin: null, ...base };
    }
  }
}
