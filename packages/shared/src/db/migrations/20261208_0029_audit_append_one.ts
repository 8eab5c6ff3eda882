import { type Kysely, sql } from 'kysely';

/**
 * `audit_append_one`: a batch of one append in one statement (issue 26: the cost of a governed call when
 * the gateway is not saturated, where most group commits hold a single append).
 *
 * `audit_append_batch` (migration 0027) runs about ten PL/pgSQL statements whatever the batch holds (the
 * entries unpacked with a window over the batch's keys, the tenants sorted, the head rows locked in a loop,
 * the records linked in a loop, the outbox ids drawn in a loop, the answer built); with one entry that
 * fixed part is most of its cost. Here the same rows are written by one statement of data-modifying CTEs:
 * the tenant's head row locked (`FOR UPDATE`), the record inserted after it with
 * `sha256(convert_to(canonical || prev_hash, 'UTF8'))` (the same bytes), the head advanced, the replay input
 * and the outbox event inserted, each only when the record was written. pgbench, one connection, one
 * entry with its replay input and event: 0.92-1.16 ms per committed call against 1.19-1.38 ms for the batch
 * function (docs/history/performance-2026.md).
 *
 * It answers nothing, and writes nothing, when the tenant has no head row yet (its first append) or when the
 * entry's append key was already used (the records' insert does nothing, so neither does the rest): the
 * caller then sends the same entry to `audit_append_batch`, which creates the head row or answers the key's
 * record as `replayed`. Concurrent appends of one tenant (several audit replicas) wait for the head row's
 * lock; the lock returns the newest version of the row, so the record follows the commit it waited for.
 */
const appendOne = `
  CREATE OR REPLACE FUNCTION audit_append_one(p jsonb)
  RETURNS TABLE (ord integer, id bigint, tenant_seq bigint, prev_hash text, record_hash text, outbox_id bigint, replayed boolean)
  LANGUAGE plpgsql AS $fn$
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH head AS (
      SELECT h.tenant_id, h.last_hash, h.record_count FROM audit_chain_heads h
        WHERE h.tenant_id = (p->>'tenant_id')::uuid FOR UPDATE
    ), rec AS (
      INSERT INTO audit_records (
        id, tenant_id, tenant_seq, action_id, agent_id, agent_type, agent_version, tool, method, params, decision,
        violations, severity, alert_tier, requires_human, execution_mode, source, session_id, bundle_revision,
        details, requested_at, prev_hash, record_hash, append_key
      )
      SELECT nextval('audit_records_id_seq'), head.tenant_id, head.record_count, (p->>'action_id')::uuid, p->>'agent_id',
        p->>'agent_type', p->>'agent_version', p->>'tool', p->>'method', p->'params', p->>'decision', p->'violations',
        p->>'severity', p->>'alert_tier', (p->>'requires_human')::boolean, p->>'execution_mode', p->>'source',
        p->>'session_id', p->>'bundle_revision', p->'details', (p->>'requested_at')::timestamptz, head.last_hash,
        encode(sha256(convert_to((p->>'canonical') || head.last_hash, 'UTF8')), 'hex'), p->>'append_key'
      FROM head
      ON CONFLICT (tenant_id, append_key) WHERE append_key IS NOT NULL DO NOTHING
      RETURNING id, tenant_id, tenant_seq, prev_hash, record_hash
    ), advanced AS (
      UPDATE audit_chain_heads h SET last_hash = rec.record_hash, record_count = rec.tenant_seq + 1
        FROM rec WHERE h.tenant_id = rec.tenant_id
    ), input AS (
      INSERT INTO audit_decision_inputs (
        tenant_id, action_id, agent_id, agent_type, agent_version, tool, method, session_id, stored_params,
        pii_detected, behavioral, decision, violations, severity, bundle_revision, passes, evaluated_at
      )
      SELECT rec.tenant_id, (p->>'action_id')::uuid, r.agent_id, r.agent_type, r.agent_version, r.tool,
        r.method, r.session_id, r.stored_params, r.pii_detected, r.behavioral, r.decision, r.violations, r.severity,
        r.bundle_revision, r.passes, r.evaluated_at
      FROM rec CROSS JOIN LATERAL jsonb_populate_record(NULL::audit_decision_inputs, p->'replay') r
      WHERE jsonb_typeof(p->'replay') = 'object'
      ON CONFLICT (tenant_id, action_id) DO NOTHING
    ), outbox AS (
      INSERT INTO event_outbox (id, subject, event, attempts)
      SELECT nextval('event_outbox_id_seq'), p->>'subject',
        (p->'event') || jsonb_build_object('record_id', rec.tenant_seq + 1, 'record_hash', rec.record_hash), 0
      FROM rec WHERE jsonb_typeof(p->'event') = 'object'
      RETURNING id
    )
    SELECT 1, rec.id, rec.tenant_seq, rec.prev_hash, rec.record_hash, (SELECT outbox.id FROM outbox), false FROM rec;
  END
  $fn$;
`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(appendOne).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS audit_append_one(jsonb)`.execute(db);
}
