import { type Kysely, sql } from 'kysely';

/**
 * Idempotent appends. A caller that never saw the answer of an append (the audit service killed after the
 * commit, a connection reset during COMMIT) sends it again under the same `append_key`; the chain answers
 * with the record the first attempt wrote instead of writing a second one, so the gateway can retry until
 * the append is answered and an answered tool call has exactly one record (docs/audit.md, "Idempotent
 * appends"). `append_key` is not part of the hashed content: chains written before verify unchanged.
 * `audit_append_batch` gains the key (optional per entry) and a `replayed` column (the record existed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE audit_records ADD COLUMN append_key text`.execute(db);
  await sql`CREATE UNIQUE INDEX audit_records_append_key ON audit_records (tenant_id, append_key) WHERE append_key IS NOT NULL`.execute(db);
  await sql`DROP FUNCTION audit_append_batch(jsonb)`.execute(db);
  await sql`
    CREATE FUNCTION audit_append_batch(p_entries jsonb)
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
        -- an append sent again under the same key (its caller never saw the answer): the record it wrote
        -- is the answer; nothing is written twice. Looked up under the head-row lock, so a concurrent
        -- append of the same key waits for the first one's commit and then finds it.
        IF e->>'append_key' IS NOT NULL THEN
          SELECT * INTO rec FROM audit_records r WHERE r.tenant_id = t AND r.append_key = e->>'append_key';
          IF FOUND THEN
            ord := i; id := rec.id; tenant_seq := rec.tenant_seq; prev_hash := rec.prev_hash; record_hash := rec.record_hash;
            outbox_id := NULL; replayed := true;
            RETURN NEXT;
            CONTINUE;
          END IF;
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
        ord := i; id := rec.id; tenant_seq := rec.tenant_seq; prev_hash := rec.prev_hash; record_hash := rec.record_hash; outbox_id := ob; replayed := false;
        RETURN NEXT;
      END LOOP;
    END
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION audit_append_batch(jsonb)`.execute(db);
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
  await sql`DROP INDEX audit_records_append_key`.execute(db);
  await sql`ALTER TABLE audit_records DROP COLUMN append_key`.execute(db);
}
