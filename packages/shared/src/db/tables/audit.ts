/** Tables owned by the audit service: the per-tenant hash chain. */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

export interface AuditRecordsTable {
  id: Generated<number>;
  tenant_id: string;
  /** 0-based position in the tenant's chain (the Merkle leaf index) */
  tenant_seq: number;
  action_id: string;
  agent_id: string;
  agent_type: string;
  agent_version: string;
  tool: string;
  method: string;
  params: JSONColumnType<Record<string, unknown>>;
  decision: string;
  violations: JSONColumnType<string[]>;
  severity: string;
  alert_tier: string | null;
  requires_human: boolean;
  execution_mode: string | null;
  source: string;
  session_id: string | null;
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

export interface AuditTables {
  audit_records: AuditRecordsTable;
  audit_chain_heads: AuditChainHeadsTable;
  audit_tamper_backups: AuditTamperBackupsTable;
}
