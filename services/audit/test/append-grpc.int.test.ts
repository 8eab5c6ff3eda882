/**
 * The Append RPC through a real gRPC server and client against the real Postgres: with omit_entry the
 * answer carries the id, sequence number, hashes and event_queued only (the caller sent the entry); the
 * stored record is the same either way. A decision's replay input (agw.decision.v1.DecisionInput) is made
 * from its record and the facts the record lacks (agw.decision.v1.DecisionFacts), committed with the record
 * and read back by GetDecisionInputs, the tenant's only.
 */
import { randomUUID } from 'node:crypto';
import type { decision, audit as pb } from '@agw/proto';
import { type Db, TEST_DATABASE_URL, openTestDb, toAuditEntry } from '@agw/shared';
import { sql } from 'kysely';
import type { ChainEntry } from '../src/chain/record-hash';
import { governedEntry } from './support/entries';
import { startAudit } from './support/start-audit';
let db: Db;
let audit: Awaited<ReturnType<typeof startAudit>>;
let client: Awaited<ReturnType<typeof startAudit>>['client'];

beforeAll(async () => {
  db = await openTestDb();
  // the service's own definition, as main.ts runs it (no receipts on append: the vault is not there)
  audit = await startAudit({ env: { DATABASE_URL: TEST_DATABASE_URL } });
  client = audit.client;
});
afterAll(async () => {
  await audit.close();
  await db.destroy();
});

const entry = () => toAuditEntry(governedEntry({ params: { q: 'x', nested: { list: [1, 'two', null, true] } }, details: { stage: 'policy' } }));

it('answers without the entry when asked; the record is stored and chained the same way', async () => {
  const tenantId = randomUUID();
  const full = await client.append({ tenant_id: tenantId, entry: entry(), event_kind: '', append_key: '' });
  expect(full.entry?.action_id).toBeTruthy();
  const e = entry();
  const brief = await client.append({ tenant_id: tenantId, entry: e, event_kind: '', omit_entry: true, append_key: '' });
  expect(brief.entry).toBeUndefined();
  expect(brief).toMatchObject({ tenant_seq: full.tenant_seq + 1, prev_hash: full.record_hash, event_queued: false });
  // a new tenant's records are 1, 2, … (the tenant's record ids), whatever the rest of the fleet appended
  expect([full.id, brief.id]).toEqual([1, 2]);
  expect(brief.record_hash).toMatch(/^[0-9a-f]{64}$/);
  // how long the append took in the service, from its arrival to its commit (the gateway's `audit_commit`)
  for (const r of [full, brief]) expect(r.commit_ms).toBeGreaterThan(0);
  const [stored] = (await client.getByAction({ tenant_id: tenantId, action_id: e.action_id })).records;
  expect(stored).toMatchObject({ id: brief.id, tenant_seq: brief.tenant_seq, prev_hash: brief.prev_hash, record_hash: brief.record_hash, entry: e });
  expect(await client.verify({ tenant_id: tenantId })).toMatchObject({ valid: true, record_count: 2 });
});

describe("record ids are the tenant's own (tenant_seq + 1), never the global row key", () => {
  it('numbers each tenant 1..n in every answer, however the tenants interleave; verification names the tenant id', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    // b appends first and in between: a's ids do not move
    for (let i = 0; i < 3; i++) await client.append({ tenant_id: b, entry: entry(), event_kind: '', append_key: '' });
    const answers = [];
    for (let i = 0; i < 5; i++) {
      answers.push(await client.appendStream({ tenant_id: a, entry: entry(), event_kind: '', omit_entry: i % 2 === 0, append_key: randomUUID() }));
      await client.append({ tenant_id: b, entry: entry(), event_kind: '', append_key: '' });
    }
    expect(answers.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect(answers.map((r) => r.tenant_seq)).toEqual([0, 1, 2, 3, 4]);
    const listed = (await client.listRecords({ tenant_id: a, limit: 100, session_id: '', chronological: true, member_id: '' })).records;
    expect(listed.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect((await client.listRecords({ tenant_id: b, limit: 100, session_id: '', chronological: false, member_id: '' })).records.map((r) => r.id)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect((await client.getByAction({ tenant_id: a, action_id: listed[3].entry!.action_id })).records.map((r) => r.id)).toEqual([4]);
    // the global row keys are elsewhere: b's records sit between a's in the one shared sequence
    const keys = await db.selectFrom('audit_records').select(['id', 'tenant_seq']).where('tenant_id', '=', a).orderBy('tenant_seq').execute();
    expect(keys.map((k) => Number(k.id))).not.toEqual([1, 2, 3, 4, 5]);
    expect(Number(keys[1].id) - Number(keys[0].id)).toBeGreaterThan(1);

    // a broken chain is reported at the tenant's record id of the first failing record
    await sql`UPDATE audit_records SET decision = 'tampered' WHERE tenant_id = ${a} AND tenant_seq = 2`.execute(db);
    expect(await client.verify({ tenant_id: a })).toMatchObject({ valid: false, record_count: 2, failed_at_record_id: 3, failed_at_action_id: listed[2].entry!.action_id, reason: 'hash_mismatch' });
    await sql`UPDATE audit_records SET decision = ${listed[2].entry!.decision} WHERE tenant_id = ${a} AND tenant_seq = 2`.execute(db);
    expect(await client.verify({ tenant_id: a })).toMatchObject({ valid: true, record_count: 5, failed_at_record_id: 0 });
  });
});

describe('idempotent appends (append_key)', () => {
  const outboxRows = async (actionId: string) =>
    Number((await db.selectFrom('event_outbox').select((eb) => eb.fn.countAll().as('n')).where(sql`event->>'action_id'`, '=', actionId).executeTakeFirstOrThrow()).n);

  it('answers an append sent again under the same key with the first record, over the stream too', async () => {
    const tenantId = randomUUID();
    const e = entry();
    const req = { tenant_id: tenantId, entry: e, event_kind: 'allowed', omit_entry: true, append_key: randomUUID() };
    const first = await client.appendStream(req);
    expect(first.event_queued).toBe(true);
    const again = await client.appendStream(req);
    const unary = await client.append(req);
    // the same record (the time each answer took in the service is its own)
    const record = (r: typeof first) => ({ ...r, commit_ms: undefined });
    expect(record(again)).toEqual(record(first));
    expect(record(unary)).toEqual(record(first));
    expect((await client.getByAction({ tenant_id: tenantId, action_id: e.action_id })).records).toHaveLength(1);
    expect(await client.verify({ tenant_id: tenantId })).toMatchObject({ valid: true, record_count: 1 });
    // the event was written once, with the first attempt's commit
    await new Promise((r) => setTimeout(r, 50));
    expect(await outboxRows(e.action_id)).toBeLessThanOrEqual(1);
  });

  it('writes one record for concurrent appends of one key (one batch or several), and a new key appends', async () => {
    const tenantId = randomUUID();
    const e = entry();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 12 }, () => client.appendStream({ tenant_id: tenantId, entry: e, event_kind: '', omit_entry: true, append_key: key })));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    const other = await client.appendStream({ tenant_id: tenantId, entry: e, event_kind: '', omit_entry: true, append_key: randomUUID() });
    expect(other.id).not.toBe(answers[0].id);
    expect(other.prev_hash).toBe(answers[0].record_hash);
    expect(await client.verify({ tenant_id: tenantId })).toMatchObject({ valid: true, record_count: 2 });
  });

  it('keys are per tenant, and a malformed key is a 422-style input error', async () => {
    const key = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const [ea, eb] = [entry(), entry()];
    const ra = await client.appendStream({ tenant_id: a, entry: ea, event_kind: '', omit_entry: true, append_key: key });
    const rb = await client.appendStream({ tenant_id: b, entry: eb, event_kind: '', omit_entry: true, append_key: key });
    // b's append is written, not answered with a's record: each tenant has its own first record
    expect([ra.id, rb.id]).toEqual([1, 1]);
    expect(rb.record_hash).not.toBe(ra.record_hash);
    expect((await client.getByAction({ tenant_id: b, action_id: eb.action_id })).records.map((r) => r.entry!.action_id)).toEqual([eb.action_id]);
    expect((await client.getByAction({ tenant_id: a, action_id: eb.action_id })).records).toHaveLength(0);
    const bad = await client.appendStream({ tenant_id: a, entry: entry(), event_kind: '', omit_entry: true, append_key: 'has space' }).catch((err: { code?: string }) => err);
    expect(bad).toMatchObject({ code: 'invalid_input' });
  });
});

describe('decision inputs: made from the record and its facts, committed with it, read back by GetDecisionInputs', () => {
  const stored = { to: { $pii: 'envelope' }, amount: 150.5 };
  const decided = (over: Partial<ChainEntry> = {}) => toAuditEntry(governedEntry({ params: stored, session_id: 'sess-1', bundle_revision: 'rev-1', ...over }));
  const facts = (): decision.DecisionFacts => ({
    decision: 'requires_human',
    violations: ['amount_above_threshold'],
    severity: 'medium',
    pii_detected: true,
    behavioral: { action_count_1h: 3, action_count_24h: 40, tool_count_24h: 7, violation_count_24h: 1, anomaly_score: 0.4213, last_action_seconds_ago: 12, session_total_amount: 99.5 },
    passes: 2,
    evaluated_at: '2026-11-25T10:11:12.345Z',
  });

  it('answers the call as its record holds it with the facts, for its tenant only; unknown and malformed ids are left out', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const e = decided();
    const f = facts();
    await client.appendStream({ tenant_id: a, entry: e, event_kind: '', omit_entry: true, append_key: randomUUID(), decision_facts: f });
    const none = entry();
    await client.append({ tenant_id: a, entry: none, event_kind: '', append_key: '' });
    const got = await client.getDecisionInputs({ tenant_id: a, action_ids: [e.action_id, none.action_id, randomUUID(), 'not-a-uuid'] });
    expect(got.inputs).toHaveLength(1);
    // the params come back as the same JSON value (jsonb may reorder keys, so compare parsed)
    const { call, ...rest } = got.inputs[0];
    expect({ ...call, params: JSON.parse(call!.params!.text), params_json: JSON.parse(call!.params_json) }).toEqual({
      agent_id: e.agent_id,
      agent_type: e.agent_type,
      agent_version: e.agent_version,
      tool: e.tool,
      method: e.method,
      params: stored,
      params_json: stored, // the previous release's form beside it, for one release
      pii_detected: true,
      session_id: 'sess-1',
    });
    const { pii_detected: _pii, ...verdict } = f;
    expect(rest).toEqual({ action_id: e.action_id, bundle_revision: 'rev-1', ...verdict });
    expect((await client.getDecisionInputs({ tenant_id: b, action_ids: [e.action_id] })).inputs).toEqual([]);
    // a session-less call without behavioral data
    const bare = decided({ session_id: null });
    await client.append({ tenant_id: a, entry: bare, event_kind: '', append_key: '', decision_facts: { ...facts(), behavioral: undefined } });
    const [back] = (await client.getDecisionInputs({ tenant_id: a, action_ids: [bare.action_id] })).inputs;
    expect(back.behavioral).toBeUndefined();
    expect(back.call!.session_id).toBe('');
  });

  it('refuses malformed facts with INVALID_ARGUMENT and writes nothing', async () => {
    const tenantId = randomUUID();
    const noTime = await client.append({ tenant_id: tenantId, entry: decided(), event_kind: '', append_key: '', decision_facts: { ...facts(), evaluated_at: 'yesterday' } }).catch((err) => err);
    expect(noTime.code).toBe('invalid_input');
    expect(noTime.detail[0].loc).toEqual(['decision_facts', 'evaluated_at']);
    expect((await client.listRecords({ tenant_id: tenantId, limit: 10, session_id: '', chronological: false, member_id: '' })).records).toEqual([]);
    const tooMany = await client.getDecisionInputs({ tenant_id: tenantId, action_ids: Array.from({ length: 1001 }, () => randomUUID()) }).catch((err) => err);
    expect(tooMany.code).toBe('invalid_input');
  });
});
