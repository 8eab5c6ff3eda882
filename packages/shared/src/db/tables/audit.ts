/** Tables owned by the audit service: the per-tenant hash chain. */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { ActionRecordField, RecordFieldKinds } from '../../action-record';
import type { ActionCallColumns } from './columns';

/** The column type of a record field of each kind (action-record.ts), as kysely reads and writes it. */
interface RecordColumnOfKind {
  text: string;
  nullable: string | null;
  list: JSONColumnType<string[]>;
  object: JSONColumnType<Record<string, unknown>>;
  bool: boolean;
  time: ColumnType<Date, Date | string, Date | string>;
}

/**
 * The record's columns: every field of the record (agw.audit.v1.AuditEntry through action-record.ts) under its
 * name, typed by its kind. A field added to the message is a column here with no edit; its migration adds it
 * (`addRecordColumns`, db/functions/record-columns.ts), and packages/shared/test/sql-functions.int.test.ts
 * fails until the migrated table has it with its kind's SQL type.
 */
export type RecordColumns = { [K in ActionRecordField]: RecordColumnOfKind[RecordFieldKinds[K]] };

export interface AuditRecordsTable extends RecordColumns {
  id: Generated<number>;
  tenant_id: string;
  /** 0-based position in the tenant's chain (the Merkle leaf index) */
  tenant_seq: number;
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
