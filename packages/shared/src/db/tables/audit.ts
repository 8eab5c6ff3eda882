/** Tables owned by the audit service: the per-tenant hash chain. */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { ActionRecordField } from '../../action-record';
import type { ActionCallColumns } from './columns';

export interface AuditRecordsTable extends ActionCallColumns {
  id: Generated<number>;
  /** 0-based position in the tenant's chain (the Merkle leaf index) */
  tenant_seq: number;
  params: JSONColumnType<Record<string, unknown>>;
  decision: string;
  violations: JSONColumnType<string[]>;
  severity: string;
  alert_tier: string | null;
  requires_human: boolean;
  execution_mode: string | null;
  source: string;
  bundle_revision: string;
  /** extra facts hashed with the record (e.g. approval note, failure mode) */
  details: JSONColumnType<Record<string, unknown>>;
  requested_at: ColumnType<Date, Date | string, Date | string>;
  prev_hash: string;
  record_hash: string;
  /** the caller's idempotency key of the append that wrote it (not hashed; migration 0016) */
  append_key: string | null;
}

export interface AuditChainHeadsTable {
  tenant_id: string;
  last_hash: string;
  record_count: number;
}

/** Demo tamper simulation: the original values of records the demo endpoint altered. */
export interface AuditTamperBackupsTable {
  record_id: number;
  tenant_id: string;
  original: JSONColumnType<Record<string, unknown>>;
  tampered_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/**
 * The replay input of one governed decision (agw.decision.v1.DecisionInput): what the policy service's
 * Replay needs to decide the call again exactly. Committed in the record's transaction by
 * `audit_append_batch` and read back through AuditService.GetDecisionInputs; before migration 0026 this
 * was the policy service's `policy_decisions`, written by the audit service's SQL (two owners).
 */
export interface AuditDecisionInputsTable extends ActionCallColumns {
  /** params as the gateway stores them: PII replaced by per-subject ciphertext envelopes */
  stored_params: JSONColumnType<Record<string, unknown>>;
  pii_detected: boolean;
  /** the behavioral data of the decision (pass 2's, or the counters at decision time) */
  behavioral: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  decision: string;
  violations: JSONColumnType<string[]>;
  severity: string;
  bundle_revision: string;
  passes: number;
  /** the decision time; time.now_ns() of the evaluation (business hours) */
  evaluated_at: ColumnType<Date, Date | string, never>;
}

export interface AuditTables {
  audit_records: AuditRecordsTable;
  audit_chain_heads: AuditChainHeadsTable;
  audit_tamper_backups: AuditTamperBackupsTable;
  audit_decision_inputs: AuditDecisionInputsTable;
}

// every field of the record (agw.audit.v1.AuditEntry, through action-record.ts) is a column: a field added to
// the message fails the build here until audit_records has it
type MissingColumns = Exclude<ActionRecordField, keyof AuditRecordsTable>;
const everyFieldIsAColumn: [MissingColumns] extends [never] ? true : MissingColumns = true;
void everyFieldIsAColumn;
