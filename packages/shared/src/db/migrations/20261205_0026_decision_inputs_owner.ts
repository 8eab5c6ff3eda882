import { type Kysely, sql } from 'kysely';

/**
 * One owner per table (issue 24): the replay input of a governed decision is committed in the audit
 * record's transaction by `audit_append_batch`, so the audit service writes it; until now it wrote it into
 * the policy service's `policy_decisions`, which the policy service also wrote and read (two owners, and one
 * service's SQL on another's table). The table becomes the audit service's `audit_decision_inputs` (rows,
 * primary key and data kept); the policy service reads it only through AuditService.GetDecisionInputs
 * (agw.decision.v1.DecisionInput, docs/architecture.md "The decision contract").
 *
 * `policy_decisions_agent_idx` (tenant, agent, time) goes: no query ever used it (replay looks rows up by
 * primary key), and it cost one more index insert per governed call.
 *
 * Everything else is migration 0025's function, with the new table name.
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
          INSERT INTO audit_decision_inputs (
            tenant_id, action_id, agent_id, agent_type, agent_version, tool, method, session_id, stored_params,
            pii_detected, behavioral, decision, violations, severity, bundle_revision, passes, evaluated_at
          )
          SELECT t, rec.action_id, r.agent_id, r.agent_type, r.agent_version, r.tool, r.method, r.session_id, r.stored_params,
            r.pii_detected, r.behavioral, r.decision, r.violations, r.severity, r.bundle_revision, r.passes, r.evaluated_at
          FROM jsonb_populate_record(NULL::audit_decision_inputs, e->'replay') r
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
  await sql`ALTER TABLE policy_decisions RENAME TO audit_decision_inputs`.execute(db);
  await sql`ALTER TABLE audit_decision_inputs RENAME CONSTRAINT policy_decisions_pkey TO audit_decision_inputs_pkey`.execute(db);
  await sql`DROP INDEX IF EXISTS policy_decisions_agent_idx`.execute(db);
  await sql.raw(appendBatch('rec.tenant_seq + 1')).execute(db);
}
