/**
 * The live write path of the audit chain: the two SQL functions that hash and write every audit record, one
 * definition each (registered in `functions/index.ts`, applied by migration 0042; the migrations before it,
 * 0008 … 0029, keep the bodies they ran and are history).
 *
 * The hash, in SQL (`recordHashSql`): `record_hash = hex(SHA-256(UTF-8(canonical || prev_hash)))`, where
 * `canonical` is the record's RFC 8785 canonical JSON, made by the audit service
 * (services/audit/src/chain/record-hash.ts, `canonicalContent`) and sent with the entry, and `prev_hash` the
 * tenant's chain head (`GENESIS` for the first record). Verification recomputes it in TypeScript from the
 * stored fields (`recordHash`, the same module); the two forms are tested against each other on the shared
 * vectors of services/audit/test/fixtures/record-hash-vectors.json (services/audit/test/record-hash-vectors.int.test.ts).
 *
 * The entry (`p`, one element of `p_entries`) is the JSON object `appendPayload` builds
 * (services/audit/src/chain/audit-record.repository.ts): the record's fields under their column names, plus
 * `tenant_id`, `canonical`, `append_key`, `replay` (an audit_decision_inputs row), `subject` and `event` (the
 * decision event for the outbox, to which `record_id` and `record_hash` are added). The insert's record
 * columns and their values are made from the record's field list (record-columns.ts), not written here.
 */
import { recordColumnValues, recordColumns, wrapSqlList } from './record-columns';
import { registerFunction } from './sql-function';

/**
 * The record hash as a SQL expression over two text expressions: SHA-256 of the canonical JSON followed by the
 * previous record's hash, both as UTF-8, in lowercase hex (the bytes record-hash.ts hashes).
 */
export function recordHashSql(canonical: string, prevHash: string): string {
  return `encode(sha256(convert_to(${canonical} || ${prevHash}, 'UTF8')), 'hex')`;
}

/**
 * The insert into audit_records, as both functions write it: the row key, the tenant and its chain position, the
 * record's columns (`recordColumns`, from the record's field list), the hashes and the append key. Wrapped at
 * 118 characters (the column list) and 121 (the values): the bodies migration 0042 applied, byte for byte
 * (packages/shared/test/audit-append-body.test.ts).
 */
const INSERT_COLUMNS = wrapSqlList(['id', 'tenant_id', 'tenant_seq', ...recordColumns, 'prev_hash', 'record_hash', 'append_key'], {
  first: '        ',
  indent: '        ',
  width: 118,
});
const values = (items: string[]) => wrapSqlList(items, { first: '      SELECT ', indent: '        ', width: 121 });
/** `audit_append_one`'s values: one entry `p`, written after the tenant's locked head row. */
const ONE_VALUES = values([
  "nextval('audit_records_id_seq')",
  'head.tenant_id',
  'head.record_count',
  ...recordColumnValues('p'),
  'head.last_hash',
  recordHashSql("(p->>'canonical')", 'head.last_hash'),
  "p->>'append_key'",
]);
/** `audit_append_batch`'s values: each linked entry `x.e` with its row key, position and hashes `w`. */
const BATCH_VALUES = values(['w.id', "(x.e->>'tenant_id')::uuid", 'w.seq', ...recordColumnValues('x.e'), 'w.prev', 'w.hash', "x.e->>'append_key'"]);

/** What both functions answer, per entry: its 1-based position and what was written (or found) for it. */
const APPENDED = 'TABLE (ord integer, id bigint, tenant_seq bigint, prev_hash text, record_hash text, outbox_id bigint, replayed boolean)';

/**
 * `audit_append_one(p jsonb)`: a batch of one append in one statement (issue 26: the cost of a governed call
 * when the gateway is not saturated, where most group commits hold a single append).
 *
 * `audit_append_batch` runs about ten PL/pgSQL statements whatever the batch holds; with one entry that fixed
 * part is most of its cost. Here the same rows are written by one statement of data-modifying CTEs: the
 * tenant's head row locked (`FOR UPDATE`), the record inserted after it with its hash (`recordHashSql`, the
 * same bytes), the head advanced, the replay input and the outbox event inserted, each only when the record
 * was written. pgbench, one connection, one entry with its replay input and event: 0.92-1.16 ms per committed
 * call against 1.19-1.38 ms for the batch function (docs/history/performance-2026.md).
 *
 * It answers nothing, and writes nothing, when the tenant has no head row yet (its first append) or when the
 * entry's append key was already used (the records' insert does nothing, so neither does the rest): the
 * caller then sends the same entry to `audit_append_batch`, which creates the head row or answers the key's
 * record as `replayed`. Concurrent appends of one tenant (several audit replicas) wait for the head row's
 * lock; the lock returns the newest version of the row, so the record follows the commit it waited for.
 */
export const auditAppendOne = registerFunction({
  name: 'audit_append_one',
  arguments: 'p jsonb',
  returns: APPENDED,
  language: 'plpgsql',
  body: `
  #variable_conflict use_column
  BEGIN
    RETURN QUERY
    WITH head AS (
      SELECT h.tenant_id, h.last_hash, h.record_count FROM audit_chain_heads h
        WHERE h.tenant_id = (p->>'tenant_id')::uuid FOR UPDATE
    ), rec AS (
      INSERT INTO audit_records (
${INSERT_COLUMNS}
      )
${ONE_VALUES}
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
  `,
});

/**
 * `audit_append_batch(p_entries jsonb)`: a group commit's appends (a JSON array of entries) in one statement
 * and one transaction, set-based: the same rows, hashes, locks, answers and idempotency per entry as
 * `audit_append_one`, with few statements per batch:
 *
 * 1. the batch's tenants' head rows are locked one tenant at a time in tenant order (created when missing),
 *    a strictly ordered two-phase lock: concurrent batches (several audit replicas) cannot deadlock;
 * 2. every record is linked and hashed (`recordHashSql`) in one loop of expressions, in the batch's order (a
 *    tenant's records keep their arrival order);
 * 3. records, replay inputs and outbox events are each written by one `INSERT … SELECT`, and the heads
 *    advanced by one `UPDATE` (one row version per tenant and batch).
 *
 * Append keys (an append sent again because its caller never saw the answer) are a matter of the unique
 * index: the records' insert takes `ON CONFLICT (tenant_id, append_key) DO NOTHING` with no look-up of its
 * own, so no cached plan can turn it into a scan of the chain (services/audit/test/append-key-lookup.int.test.ts).
 * When the insert writes fewer rows than it was given (a key already used: rare), the rows it wrote are
 * removed again, the used keys' records are looked up with a statement planned for this call (`EXECUTE`), and
 * the rest of the batch is linked again without them; a key used twice within one batch is answered with its
 * first entry's record. Either way such an entry is answered `replayed` with the record the key wrote, and
 * nothing is written for it.
 */
export const auditAppendBatch = registerFunction({
  name: 'audit_append_batch',
  arguments: 'p_entries jsonb',
  returns: APPENDED,
  language: 'plpgsql',
  body: `
  DECLARE
    n integer;
    -- per entry of the batch, by its position
    e_tenant uuid[];
    e_canon text[];
    e_first integer[];   -- the batch's first entry with the same (tenant, append key); itself when none
    e_event boolean[];
    r_id bigint[];
    r_seq bigint[];
    r_prev text[];
    r_hash text[];
    r_ob bigint[];
    r_replayed boolean[];
    -- per tenant of the batch, in tenant order (the order their head rows are locked in)
    h_tenant uuid[];
    h_hash0 text[] := '{}';
    h_count0 bigint[] := '{}';
    h_hash text[];
    h_count bigint[];
    -- the entries this call writes
    w_o integer[];
    w_id bigint[];
    w_seq bigint[];
    w_prev text[];
    w_hash text[];
    -- the outbox rows it writes
    o_o integer[];
    o_id bigint[];
    head audit_chain_heads%ROWTYPE;
    t uuid;
    i integer;
    j integer;
    written integer;
    used record;
  BEGIN
    SELECT count(*)::integer,
           array_agg((x.e->>'tenant_id')::uuid ORDER BY x.o),
           array_agg(x.e->>'canonical' ORDER BY x.o),
           array_agg(x.first_o ORDER BY x.o),
           array_agg(coalesce(jsonb_typeof(x.e->'event') = 'object', false) ORDER BY x.o)
      INTO n, e_tenant, e_canon, e_first, e_event
      FROM (SELECT v.value AS e, v.ordinality::integer AS o,
                   CASE WHEN v.value->>'append_key' IS NULL THEN v.ordinality::integer
                        ELSE min(v.ordinality::integer) OVER (PARTITION BY v.value->>'tenant_id', v.value->>'append_key') END AS first_o
              FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS v) x;
    IF n = 0 THEN
      RETURN;
    END IF;
    r_replayed := array_fill(false, ARRAY[n]);

    SELECT array_agg(DISTINCT x.t ORDER BY x.t) INTO h_tenant FROM unnest(e_tenant) AS x(t);
    FOREACH t IN ARRAY h_tenant LOOP
      SELECT * INTO head FROM audit_chain_heads h WHERE h.tenant_id = t FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO audit_chain_heads (tenant_id, last_hash, record_count) VALUES (t, 'GENESIS', 0)
          ON CONFLICT (tenant_id) DO NOTHING;
        SELECT * INTO head FROM audit_chain_heads h WHERE h.tenant_id = t FOR UPDATE;
      END IF;
      h_hash0 := h_hash0 || head.last_hash;
      h_count0 := h_count0 || head.record_count;
    END LOOP;

    -- at most twice: the second time without the entries whose append key had been used
    FOR attempt IN 1..2 LOOP
      h_hash := h_hash0;
      h_count := h_count0;
      w_o := '{}'; w_id := '{}'; w_seq := '{}'; w_prev := '{}'; w_hash := '{}';
      FOR i IN 1..n LOOP
        CONTINUE WHEN r_replayed[i] OR e_first[i] <> i;
        j := array_position(h_tenant, e_tenant[i]);
        r_id[i] := nextval('audit_records_id_seq');
        r_seq[i] := h_count[j];
        r_prev[i] := h_hash[j];
        r_hash[i] := ${recordHashSql('e_canon[i]', 'h_hash[j]')};
        h_hash[j] := r_hash[i];
        h_count[j] := h_count[j] + 1;
        w_o := w_o || i; w_id := w_id || r_id[i]; w_seq := w_seq || r_seq[i]; w_prev := w_prev || r_prev[i]; w_hash := w_hash || r_hash[i];
      END LOOP;

      INSERT INTO audit_records (
${INSERT_COLUMNS}
      )
${BATCH_VALUES}
      FROM unnest(w_o, w_id, w_seq, w_prev, w_hash) AS w(o, id, seq, prev, hash)
        CROSS JOIN LATERAL (SELECT p_entries -> (w.o - 1) AS e) x
      ON CONFLICT (tenant_id, append_key) WHERE append_key IS NOT NULL DO NOTHING;
      GET DIAGNOSTICS written = ROW_COUNT;
      EXIT WHEN written = cardinality(w_o);
      IF attempt = 2 THEN
        RAISE EXCEPTION 'audit_append_batch: an append key conflicted after its look-up';
      END IF;

      -- an append key had been used (an append sent again): undo this attempt, answer those entries with
      -- the records their keys wrote, and link the rest again
      DELETE FROM audit_records r WHERE r.id = ANY(w_id);
      FOR used IN EXECUTE
        'SELECT k.o::integer AS o, r.id, r.tenant_seq, r.prev_hash, r.record_hash
           FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k(t, key, o)
           JOIN audit_records r ON r.tenant_id = k.t AND r.append_key = k.key AND r.append_key IS NOT NULL'
        USING e_tenant, ARRAY(SELECT v.value->>'append_key' FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS v ORDER BY v.ordinality)
      LOOP
        r_replayed[used.o] := true;
        r_id[used.o] := used.id;
        r_seq[used.o] := used.tenant_seq;
        r_prev[used.o] := used.prev_hash;
        r_hash[used.o] := used.record_hash;
      END LOOP;
    END LOOP;

    -- a key used twice in this batch: the later entries are answered with the first one's record
    FOR i IN 1..n LOOP
      CONTINUE WHEN e_first[i] = i;
      j := e_first[i];
      r_id[i] := r_id[j]; r_seq[i] := r_seq[j]; r_prev[i] := r_prev[j]; r_hash[i] := r_hash[j];
      r_replayed[i] := true;
    END LOOP;

    UPDATE audit_chain_heads h SET last_hash = u.hash, record_count = u.cnt
      FROM unnest(h_tenant, h_hash, h_count, h_count0) AS u(t, hash, cnt, cnt0)
      WHERE h.tenant_id = u.t AND u.cnt <> u.cnt0;

    INSERT INTO audit_decision_inputs (
      tenant_id, action_id, agent_id, agent_type, agent_version, tool, method, session_id, stored_params,
      pii_detected, behavioral, decision, violations, severity, bundle_revision, passes, evaluated_at
    )
    SELECT (x.e->>'tenant_id')::uuid, (x.e->>'action_id')::uuid, r.agent_id, r.agent_type, r.agent_version, r.tool,
      r.method, r.session_id, r.stored_params, r.pii_detected, r.behavioral, r.decision, r.violations, r.severity,
      r.bundle_revision, r.passes, r.evaluated_at
    FROM unnest(w_o) AS w(o)
      CROSS JOIN LATERAL (SELECT p_entries -> (w.o - 1) AS e) x
      CROSS JOIN LATERAL jsonb_populate_record(NULL::audit_decision_inputs,
        CASE WHEN jsonb_typeof(x.e->'replay') = 'object' THEN x.e->'replay' END) r
    WHERE jsonb_typeof(x.e->'replay') = 'object'
    ON CONFLICT (tenant_id, action_id) DO NOTHING;

    o_o := '{}'; o_id := '{}';
    FOREACH i IN ARRAY w_o LOOP
      CONTINUE WHEN NOT e_event[i];
      r_ob[i] := nextval('event_outbox_id_seq');
      o_o := o_o || i; o_id := o_id || r_ob[i];
    END LOOP;
    IF cardinality(o_o) > 0 THEN
      INSERT INTO event_outbox (id, subject, event, attempts)
      SELECT o.id, x.e->>'subject',
        (x.e->'event') || jsonb_build_object('record_id', r_seq[o.o] + 1, 'record_hash', r_hash[o.o]), 0
      FROM unnest(o_o, o_id) AS o(o, id)
        CROSS JOIN LATERAL (SELECT p_entries -> (o.o - 1) AS e) x;
    END IF;

    RETURN QUERY SELECT g.i, r_id[g.i], r_seq[g.i], r_prev[g.i], r_hash[g.i], r_ob[g.i], r_replayed[g.i]
      FROM generate_series(1, n) AS g(i);
  END
  `,
});
