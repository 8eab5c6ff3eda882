import { type Kysely, sql } from 'kysely';

/**
 * The append-key look-up of `audit_append_batch` (migration 0016) was a statement of its own before the
 * insert. PL/pgSQL caches a generic plan for each statement after five calls on a connection and keeps it
 * for the connection's life. Planned while `audit_records` had never been analyzed (a new deployment: the
 * audit service's pool connects at start), that plan went through `audit_records_hash_idx` (or
 * `_action_idx`) and filtered on the key instead of probing the partial unique index
 * `audit_records_append_key`: every append read its tenant's whole chain, so Postgres' work per governed
 * call grew with the chain until the service restarted. bench:load on a new database: 5,644 buffer hits and
 * 3.35 ms of Postgres CPU per governed call at about 7,000 records (docs/history/performance-2026.md, "The yardstick").
 *
 * The insert now detects a used key itself: `ON CONFLICT (tenant_id, append_key) … DO NOTHING` takes the
 * unique index as its arbiter, with no plan to choose, and only an append sent again (rare) looks its
 * record up. One statement fewer per append, and no plan to go wrong. Planning the look-up per call
 * instead (EXECUTE) also fixed it but cost 0.14 ms of Postgres CPU per governed call (8 more system calls:
 * the planner sizes each of the table's indexes). Everything else is migration 0023's function.
 * Test: services/audit/test/append-key-lookup.int.test.ts.
 */
function appendBatch(recordId: string): string {
  return `
    CREATE OR REPLACE FUNCTION audit_append_batch(p_entries jsonb)
    RETURNS TABLE (ord integer, id bigint, tenant_seq bigint, prev_hash text, record_hash text, outbox_id bigint, replayed boolean)
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
          details, requested_at, prev_hash, record_hash, append_key
        ) VALUES (
          t, head.record_count, (e->>'action_id')::uuid, e->>'agent_id', e->>'agent_type', e->>'agent_version',
          e->>'tool', e->>'method', e->'params', e->>'decision', e->'violations', e->>'severity', e->>'alert_tier',
          (e->>'requires_human')::boolean, e->>'execution_mode', e->>'source', e->>'session_id', e->>'bundle_revision',
          e->'details', (e->>'requested_at')::timestamptz, head.last_hash,
          encode(sha256(convert_to((e->>'canonical') || head.last_hash, 'UTF8')), 'hex'), e->>'append_key'
        )
        -- an append sent again under the same key (its caller never saw the answer): the unique index on
        -- (tenant_id, append_key) refuses the second row, and the record the first one wrote is the answer;
        -- nothing is written twice. Under the head-row lock, so a concurrent append of the same key waits for
        -- the first one's commit and then conflicts with it.
        ON CONFLICT (tenant_id, append_key) WHERE append_key IS NOT NULL DO NOTHING
        RETURNING * INTO rec;
        IF NOT FOUND THEN
          SELECT * INTO rec FROM audit_records r WHERE r.tenant_id = t AND r.append_key = e->>'append_key';
          ord := i; id := rec.id; tenant_seq := rec.tenant_seq; prev_hash := rec.prev_hash; record_hash := rec.record_hash;
          outbox_id := NULL; replayed := true;
          RETURN NEXT;
          CONTINUE;
        END IF;
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
            VALUES (e->>'subject', (e->'event') || jsonb_build_object('record_id', ${recordId}, 'record_hash', rec.record_hash), 0)
            RETURNING event_outbox.id INTO ob;
        END IF;
        ord := i; id := rec.id; tenant_seq := rec.tenant_seq; prev_hash := rec.prev_hash; record_hash := rec.record_hash; outbox_id := ob; replayed := false;
        RETURN NEXT;
      END LOOP;
    END
    $fn$;
  `;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(appendBatch('rec.tenant_seq + 1')).execute(db);
}
