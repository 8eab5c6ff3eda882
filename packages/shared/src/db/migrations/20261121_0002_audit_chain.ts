import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE audit_chain_heads (
      tenant_id uuid PRIMARY KEY,
      last_hash text NOT NULL,
      record_count bigint NOT NULL DEFAULT 0
    );
    CREATE TABLE audit_records (
      id bigserial PRIMARY KEY,
      tenant_id uuid NOT NULL,
      tenant_seq bigint NOT NULL,
      action_id uuid NOT NULL,
      agent_id text NOT NULL,
      agent_type text NOT NULL,
      agent_version text NOT NULL,
      tool text NOT NULL,
      method text NOT NULL,
      params jsonb NOT NULL,
      decision text NOT NULL,
      violations jsonb NOT NULL,
      severity text NOT NULL,
      alert_tier text,
      requires_human boolean NOT NULL DEFAULT false,
      execution_mode text,
      source text NOT NULL,
      session_id text,
      bundle_revision text NOT NULL,
      details jsonb NOT NULL DEFAULT '{}'::jsonb,
      requested_at timestamptz NOT NULL,
      prev_hash text NOT NULL,
      record_hash text NOT NULL,
      UNIQUE (tenant_id, tenant_seq)
    );
    CREATE INDEX audit_records_tenant_id_idx ON audit_records (tenant_id, id);
    CREATE INDEX audit_records_action_idx ON audit_records (tenant_id, action_id);
    CREATE INDEX audit_records_hash_idx ON audit_records (tenant_id, record_hash);
    CREATE INDEX audit_records_session_idx ON audit_records (tenant_id, session_id) WHERE session_id IS NOT NULL;
    CREATE TABLE audit_tamper_backups (
      record_id bigint PRIMARY KEY,
      tenant_id uuid NOT NULL,
      original jsonb NOT NULL,
      tampered_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE audit_tamper_backups, audit_records, audit_chain_heads`.execute(db);
}
