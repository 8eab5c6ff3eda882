/**
 * The compliance export document (docs/compliance-export.md): the one type of it, shared by its writer
 * (services/audit/src/export/compliance-evidence.ts and services/gateway/src/compliance/compliance-export.ts,
 * and the PDF renderer that reads it) and its reader
 * (`verifyExport`, the offline `agw-verify`). It lives here, in the package auditors run, because the
 * document is a published contract that outlives the service that writes it: the verifier must read every
 * format version the fleet ever wrote, and must not need the fleet's code (this package depends only on
 * `canonicalize` and `viem`). The audit service and the gateway import it as a type.
 *
 * Format versions (`package.format_version`):
 * - 1.0: the sections up to `policy_snapshot`.
 * - 1.1: adds `evidence` (signed checkpoints, verifier key, consistency proofs, chain); later 1.1 exports
 *   also carry `anchors.references[].checkpoint_sha256`.
 * - 1.2: every record id is the tenant's own, leaf index + 1 (`hasTenantRecordIds`); before, the fleet's
 *   global row key. The shape is unchanged.
 *
 * A field that older versions lack is optional here, named with the version that added it; the writer
 * always writes the current version with every field. Types only: importing this module loads nothing.
 */

/** The whole document, as `GET /api/compliance/export/{tenant_id}?format=json` returns it. */
export interface ComplianceExport {
  package: ExportHeader;
  summary: ExportSummary;
  /** the records of the range, at most EXPORT_MAX_RECORDS (`summary.truncated` says when the list was cut) */
  audit_records: ExportedRecord[];
  /** the chain verification of the whole chain (`valid`, `record_count`, `failed_at_record_id`, ...), with `verified_at`, `scope` and `algorithm` */
  chain_verification: Record<string, unknown>;
  merkle: {
    algorithm: string;
    leaf: string;
    tree_heads_total: number;
    /** the latest tree head (tree_index, merkle_root, record_count, records_added, from/to_record_id, period_start/end); null: no tree yet */
    latest_tree: Record<string, unknown> | null;
    trees_in_range: Array<Record<string, unknown>>;
  };
  anchors: {
    /** `ok`, or `unavailable` (with `error`, and no references) when the anchor service did not answer */
    status: string;
    references: AnchorReference[];
    error?: string;
  };
  sample_inclusion_proofs: SampleInclusionProof[];
  /** the tenant's policy at export time (`status`, `policy_template`, `bundle_revision`, ...), or `{status: 'unavailable', error}` */
  policy_snapshot: Record<string, unknown>;
  /** What an offline verifier needs beyond the sections above (docs/evidence.md). Absent before format 1.1. */
  evidence?: ExportEvidence;
}

/**
 * The audit service's part of the document (ComplianceService.GetEvidence): every section but those from
 * other services, which the gateway adds: `anchors`, `policy_snapshot` (anchor and policy services) and
 * `evidence.chain` (from the anchors).
 */
export type AuditEvidence = Omit<ComplianceExport, 'anchors' | 'policy_snapshot' | 'evidence'> & { evidence: Omit<ExportEvidence, 'chain'> };

export interface ExportHeader {
  format_version: string;
  standard: string;
  generated_at: string;
  tenant_id: string;
  range: { from: string; to: string };
}

export interface ExportSummary {
  /** records in the range (all of them, also when `audit_records` was cut) */
  total: number;
  by_decision: Record<string, number>;
  by_severity: Record<string, number>;
  distinct_agents: number;
  distinct_tools: number;
  first_at: string | null;
  last_at: string | null;
  records_exported: number;
  truncated: boolean;
}

/**
 * One audit record: the hashed keys (`HASHED_KEYS`, docs/audit.md), its chain link and hash, and its id and
 * leaf index, which are not hashed. `id` is leaf_index + 1 from format 1.2, the global row key before.
 */
export type ExportedRecord = Record<string, unknown> & { id: number; leaf_index: number; prev_hash: string; record_hash: string };

/** An RFC 9162 inclusion proof of one exported record up to the latest tree head. */
export interface SampleInclusionProof {
  /** the record's id (leaf_index + 1 from format 1.2) */
  record_id: number;
  record_hash: string;
  leaf_index: number;
  leaf_hash: string;
  tree_index: number;
  tree_size: number;
  merkle_root: string;
  proof: string[];
  /** whether the service's own check of the proof passed (the verifier checks it again) */
  verified: boolean;
}

/** One anchored tree head: the tenant's leaf in an aggregate tree whose root was written on chain. */
export interface AnchorReference {
  tree_index: number;
  tree_size: number;
  tenant_root: string;
  aggregate_root: string;
  leaf_index: number;
  leaf_count: number;
  aggregate_proof: string[];
  tx_hash: string;
  block_number: number;
  anchored_at: string;
  network: string;
  chain_id: number;
  contract_address: string;
  /** null on chains without an explorer (the local chain) */
  explorer_tx_url: string | null;
  /**
   * SHA-256 of the signed checkpoint note the anchored leaf covers (docs/evidence.md); null: a leaf anchored
   * without it (56 bytes). Absent in exports written before anchors covered checkpoints (early 1.1).
   */
  checkpoint_sha256?: string | null;
}

/** The `evidence` section (format 1.1 on). */
export interface ExportEvidence {
  /** `ok`, or `unavailable` (with `error`, no checkpoints and no key) when checkpoint signing is not configured or failed */
  status: string;
  error?: string;
  /** C2SP tlog-checkpoint signed notes of every tree head, oldest first */
  checkpoints: ExportCheckpoint[];
  /** the tenant's verifier key (`<name>+<key id>+<base64 key>`); the verifier trusts only the one it is given */
  verifier_key: string | null;
  /** the key name, the log's origin */
  origin: string | null;
  /** every tree head of the tenant, for the consistency proofs */
  tree_heads: Array<{ tree_index: number; tree_size: number; merkle_root: string }>;
  /** RFC 9162 consistency proofs between successive tree heads */
  consistency_proofs: Array<{ from_size: number; to_size: number; proof: string[] }>;
  /** where the anchors are; all null when nothing was anchored */
  chain: { chain_id: number | null; contract_address: string | null; network: string | null };
}

export interface ExportCheckpoint {
  tree_index: number;
  tree_size: number;
  merkle_root: string;
  /** SHA-256 of `note` (UTF-8), the value an anchored leaf covers */
  checkpoint_sha256: string;
  /** the signed note (C2SP signed-note), verifiable with the verifier key */
  note: string;
  /** the note followed by its witnesses' C2SP tlog-cosignature lines (absent before witnesses existed) */
  cosigned_note?: string;
}
