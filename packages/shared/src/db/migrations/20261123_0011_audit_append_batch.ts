import { type Kysely, sql } from 'kysely';

/**
 * Group commit of the hash chain: `audit_append_batch` appends a batch of records (one or many tenants,
 * in the order given) in ONE statement, so the audit service commits concurrent appends in one
 * transaction and one WAL flush. Per record it does exactly what `audit_append` (migration 0008) does:
 * lock the tenant's head row, hash `canonical || prev_hash` with SHA-256 (the bytes of
 * services/audit/src/chain/record-hash.ts, unchanged), insert, advance the head. In the same transaction,
 * per record and only when given:
 *   - `replay`: the policy service's replay input (a policy_decisions row), so a governed call has one
 *     durable commit instead of two;
 *   - `subject` + `event`: the decision event, written to event_outbox with the record's id and hash, so
 *     the event can never be lost once the record is committed (the audit service publishes it right
 *     after the commit and deletes the row; any replica's outbox relay publishes what is left).
 * Returns, per record in input order (`ord`), the chain fields and the outbox row id (null when no event).
 * The caller locks the head rows in a deterministic order (batches are sorted by tenant) so two replicas'
 * batches never deadlock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION audit_append_batch(p_entries jsonb)
    RETURNS TABLE (ord integer, id bigint, tenant_seq bigint, prev_hash text, record_hash text, outbox_id bigint)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      e jsonb;
      i integer;
      t uuid;
      head audit_chain_heads%ROWTYPE;
      rec audit_records%ROWTYPE;
      ob bigint;
    BEGIN
      FOR e, i IN SELECT x.value, x.ordinality::integer FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS x LOOP
        t := (e->>'tenant_id')::uuid;
        SELECT * INTO head FROM audit_chain_heads h WHERE h.tenant_id = t FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO audit_chain_heads (tenant_id, last_hash, record_count) VALUES (t, 'GENESIS', 0)
            ON CONFLICT (tenant_id) DO NOTHING;
          SELECT * INTO head FROM audit_chain_heads h WHERE h.tenant_id = t FOR UPDATE;
        END IF;
        INSERT INTO audit_records (
          tenant_id, tenant_seq, action_id, agent_id, agent_type, agent_version, tool, method, params, decision,
          violations, severity, alert_tier, requires_human, execution_mode, source, session_id, bundle_revision,
          details, requested_at, prev_hash, record_hash
        ) VALUES (
          t, head.record_count, (e->>'action_id')::uuid, e->>'agent_id', e->>'agent_type', e->>'agent_version',
          e->>'tool', e->>'method', e->'params', e->>'decision', e->'violations', e->>'severity', e->>'alert_tier',
          (e->>'requires_human')::boolean, e->>'execution_mode', e->>'source', e->>'session_id', e->>'bundle_revision',
          e->'details', (e->>'requested_at')::timestamptz, head.last_hash,
          encode(sha256(convert_to((e->>'canonical') || head.last_hash, 'UTF8')), 'hex')
        ) RETURNING * INTO rec;
        UPDATE audit_chain_heads h SET last_hash = rec.record_hash, record_count = h.record_count + 1 WHERE h.tenant_id = t;
        IF jsonb_typeof(e->'replay') = 'object' THEN
          INSERT INTO policy_decisions (
            tenant_id, action_id, agent_id, agent_type, agent_version, tool, method, session_id, stored_params,
            pii_detected, behavioral, decision, violations, severity, bundle_revision, passes, evaluated_at
          )
          SELECT t, rec.action_id, r.agent_id, r.agent_type, r.agent_version, r.tool, r.method, r.session_id, r.stored_params,
            r.pii_detected, r.behavioral, r.decision, r.violations, r.severity, r.bundle_revision, r.passes, r.evaluated_at
          FROM jsonb_populate_record(NULL::policy_decisions, e->'replay') r
          ON CONFLICT (tenant_id, action_id) DO NOTHING;
        END IF;
        ob := NULL;
        IF jsonb_typeof(e->'event') = 'object' THEN
          INSERT INTO event_outbox (subject, event, attempts)
            VALUES (e->>'subject', (e->'event') || jsonb_build_object('record_id', rec.id, 'record_hash', rec.record_hash), 0)
            RETURNING event_outbox.id INTO ob;
        END IF;
        ord := i; id := rec.id; tenant_seq := rec.tenant_seq; prev_hash := rec.prev_hash; record_hash := rec.record_hash; outbox_id := ob;
        RETURN NEXT;
      END LOOP;
    END
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS audit_append_batch(jsonb)`.execute(db);
}
