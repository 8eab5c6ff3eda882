/**
 * The audit service's part of a tenant's compliance export package (docs/compliance-export.md): the audit
 * records in the range, hash chain verification, Merkle summary, sample inclusion proofs and the checkpoint
 * evidence, all of them this service's own data. The gateway's compliance module
 * (services/gateway/src/compliance) adds the anchor references and the policy snapshot and renders the
 * formats; this service calls neither the anchor nor the policy service. It answers the package's JSON
 * (ComplianceService.GetEvidence), its keys in the document's order, and with format=opa the replay inputs of
 * the listed records' actions as stored.
 */
import { type DecisionInputRow, InputError, presentStoredRecord } from '@agw/shared';
import type { AuditChain } from '../chain/audit-chain';
import type { StoredRecord } from '../chain/audit-record.repository';
import type { MerkleProofs } from '../merkle/merkle-proofs';
import type { Checkpoints } from '../checkpoints/checkpoints';
import { type CosignatureRepository, cosignedNote } from '../checkpoints/witnessing';
import type { TreeHead } from '../merkle/merkle.repository';
import type { ExportRepository } from './export.repository';
// the document's one type is the verifier's (packages/verifier/src/export-format.ts): writer and reader agree by construction
import type { AuditEvidence, ExportedRecord, SampleInclusionProof } from '@agw/verifier';

export type { AuditEvidence } from '@agw/verifier';

/** The replay inputs committed with the records (chain/decision-input.repository.ts). */
export interface DecisionInputSource {
  byActions(tenantId: string, actionIds: readonly string[]): Promise<DecisionInputRow[]>;
}
/** most action ids per look-up (DecisionInputRepository's MAX_DECISION_INPUTS) */
const INPUTS_PER_LOOKUP = 1000;

/** The answer of GetEvidence: the package's JSON and, when asked, the replay inputs' (a JSON array). */
export interface EvidenceResult {
  packageJson: Buffer;
  decisionInputsJson: Buffer;
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

export class ComplianceEvidence {
  constructor(
    private readonly d: {
      chain: AuditChain;
      records: ExportRepository;
      proofs: MerkleProofs;
      checkpoints?: Checkpoints;
      /** the witnesses' cosignatures of the checkpoints (docs/evidence.md, "Witnesses") */
      cosignatures?: CosignatureRepository;
      verifierKey?: (tenantId: string) => Promise<{ vkey: string; key_name: string }>;
      /** the replay inputs, for the OPA decision log (format=opa) */
      decisionInputs?: DecisionInputSource;
      maxRecords: number;
      sampleProofs: number;
      /** largest answer (bytes, the package's JSON and the inputs'); gRPC messages are limited to 16 MB */
      maxBytes: number;
    },
  ) {}

  /**
   * The package's JSON (and the replay inputs' with `inputs`). The answer travels in one gRPC message: fewer
   * records are listed (the summary still counts all) until it fits, the same cut the gateway makes to fit
   * its rendered document (EXPORT_MAX_BYTES bounds both).
   */
  async evidence(tenantId: string, q: { from?: string; to?: string; inputs: boolean }): Promise<EvidenceResult> {
    const pkg = await this.build(tenantId, q);
    const rows = q.inputs ? await this.inputsOf(tenantId, pkg) : [];
    const render = () => {
      const listed = new Set(pkg.audit_records.map((r) => String(r.action_id)));
      return { packageJson: Buffer.from(JSON.stringify(pkg)), decisionInputsJson: q.inputs ? Buffer.from(JSON.stringify(rows.filter((r) => listed.has(r.action_id)))) : Buffer.alloc(0) };
    };
    let out = render();
    while (out.packageJson.length + out.decisionInputsJson.length > this.d.maxBytes && pkg.audit_records.length > 0) {
      pkg.audit_records = pkg.audit_records.slice(0, Math.floor(pkg.audit_records.length * 0.7));
      pkg.summary.records_exported = pkg.audit_records.length;
      pkg.summary.truncated = true;
      out = render();
    }
    return out;
  }

  async build(tenantId: string, q: { from?: string; to?: string }): Promise<AuditEvidence> {
    const now = new Date();
    const from = parseBound(q.from, 'from') ?? new Date(0);
    const to = parseBound(q.to, 'to') ?? new Date(now.getTime() + 1);
    if (from.getTime() > to.getTime()) throw InputError.at(['query', 'from'], 'from must not be after to', 'value_error');

    const [records, stats, verification, heads] = await Promise.all([
      this.d.records.records(tenantId, from, to, this.d.maxRecords),
      this.d.records.stats(tenantId, from, to),
      this.d.chain.verify(tenantId),
      this.d.proofs.listHeads(tenantId),
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
    const evidence = await this.checkpointEvidence(tenantId, heads);
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
      sample_inclusion_proofs: samples,
      evidence,
    };
  }

  /** The replay inputs of the exported records' actions. */
  private async inputsOf(tenantId: string, p: AuditEvidence): Promise<DecisionInputRow[]> {
    if (!this.d.decisionInputs) return [];
    const ids = [...new Set(p.audit_records.map((r) => String(r.action_id)))];
    const out: DecisionInputRow[] = [];
    for (let i = 0; i < ids.length; i += INPUTS_PER_LOOKUP) out.push(...(await this.d.decisionInputs.byActions(tenantId, ids.slice(i, i + INPUTS_PER_LOOKUP))));
    return out;
  }

  /** Checkpoints, verifier key and consistency proofs between successive heads (the gateway adds the anchors' chain). */
  private async checkpointEvidence(tenantId: string, heads: TreeHead[]): Promise<AuditEvidence['evidence']> {
    const treeHeads = heads.map((h) => ({ tree_index: h.tree_index, tree_size: h.tree_size, merkle_root: h.merkle_root }));
    const consistency: AuditEvidence['evidence']['consistency_proofs'] = [];
    for (let i = 1; i < heads.length; i++) {
      const p = await this.d.proofs.consistency(tenantId, heads[i - 1].tree_index, heads[i].tree_index);
      consistency.push({ from_size: p.first.tree_size, to_size: p.second.tree_size, proof: p.proof });
    }
    const base = { tree_heads: treeHeads, consistency_proofs: consistency };
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
