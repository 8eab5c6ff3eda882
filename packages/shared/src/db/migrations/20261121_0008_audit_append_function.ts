import { type Kysely, sql } from 'kysely';

/**
 * One round trip per chain append: lock the tenant's head row, link and hash the record, insert it and
 * advance the head, all inside Postgres. The hash is SHA-256 over the same bytes as
 * services/audit/src/chain/record-hash.ts: UTF-8(canonical JSON) || UTF-8(prev_hash); verification
 * recomputes it in TypeScript, so the two implementations check each other.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION audit_append(
      p_tenant_id uuid, p_canonical text, p_action_id uuid, p_agent_id text, p_agent_type text, p_agent_version text,
      p_tool text, p_method text, p_params jsonb, p_decision text, p_violations jsonb, p_severity text, p_alert_tier text,
      p_requires_human boolean, p_execution_mode text, p_source text, p_session_id text, p_bundle_revision text,
      p_details jsonb, p_requested_at timestamptz
    ) RETURNS SETOF audit_records LANGUAGE plpgsql AS $fn$
    DECLARE
      head audit_chain_heads%ROWTYPE;
      rec audit_records%ROWTYPE;
    BEGIN
      SELECT * INTO head FROM audit_chain_heads WHERE tenant_id = p_tenant_id FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO audit_chain_heads (tenant_id, last_hash, record_count) VALUES (p_tenant_id, 'GENESIS', 0)
          ON CONFLICT (tenant_id) DO NOTHING;
        SELECT * INTO head FROM audit_chain_heads WHERE tenant_id = p_tenant_id FOR UPDATE;
      END IF;
      INSERT INTO audit_records (
        tenant_id, tenant_seq, action_id, agent_id, agent_type, agent_version, tool, method, params, decision,
        violations, severity, alert_tier, requires_human, execution_mode, source, session_id, bundle_revision,
        details, requested_at, prev_hash, record_hash
      ) VALUES (
        p_tenant_id, head.record_count, p_action_id, p_agent_id, p_agent_type, p_agent_version, p_tool, p_method,
        p_params, p_decision, p_violations, p_severity, p_alert_tier, p_requires_human, p_execution_mode, p_source,
        p_session_id, p_bundle_revision, p_details, p_requested_at, head.last_hash,
        encode(sha256(convert_to(p_canonical || head.last_hash, 'UTF8')), 'hex')
      ) RETURNING * INTO rec;
      UPDATE audit_chain_heads SET last_hash = rec.record_hash, record_count = record_count + 1 WHERE tenant_id = p_tenant_id;
      RETURN NEXT rec;
    END
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS audit_append`.execute(db);
}
