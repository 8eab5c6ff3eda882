/**
 * The Append RPC through a real gRPC server and client against the real Postgres: with omit_entry the
 * answer carries the id, sequence number, hashes and event_queued only (the caller sent the entry); the
 * stored record is the same either way. A decision's replay input (agw.decision.v1.DecisionInput) is
 * committed with its record and read back by GetDecisionInputs, the same message, the tenant's only.
 */
import { randomUUID } from 'node:crypto';
import type { decision, audit as pb } from '@agw/proto';
import { type Db, createDb, migrateToLatest, toAuditEntry } from '@agw/shared';
import { sql } from 'kysely';
import { governedEntry } from './support/entries';
import { startAudit } from './support/start-audit';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
let db: Db;
let audit: Awaited<ReturnType<typeof startAudit>>;
let client: Awaited<ReturnType<typeof startAudit>>['client'];

beforeAll(async () => {
  await migrateToLatest(url);
  db = createDb(url);
  // the service's own definition, as main.ts runs it (no receipts on append: the vault is not there)
  audit = await startAudit({ env: { DATABASE_URL: url } });
  client = audit.client;
});
afterAll(async () => {
  await audit.close();
  await db.destroy();
});

const entry = () => toAuditEntry(governedEntry({ params: { q: 'x', nested: { list: [1, 'two', null, true] } }, details: { stage: 'policy' } }));

it('answers without the entry when asked; the record is stored and chained the same way', async () => {
  const tenantId = randomUUID();
  const full = await client.append({ tenantId, entry: entry(), eventKind: '', appendKey: '' });
  expect(full.entry?.actionId).toBeTruthy();
  const e = entry();
  const brief = await client.append({ tenantId, entry: e, eventKind: '', omitEntry: true, appendKey: '' });
  expect(brief.entry).toBeUndefined();
  expect(brief).toMatchObject({ tenantSeq: full.tenantSeq + 1, prevHash: full.recordHash, eventQueued: false });
  // a new tenant's records are 1, 2, … (the tenant's record ids), whatever the rest of the fleet appended
  expect([full.id, brief.id]).toEqual([1, 2]);
  expect(brief.recordHash).toMatch(/^[0-9a-f]{64}$/);
  // how long the append took in the service, from its arrival to its commit (the gateway's `audit_commit`)
  for (const r of [full, brief]) expect(r.commitMs).toBeGreaterThan(0);
  const [stored] = (await client.getByAction({ tenantId, actionId: e.actionId })).records;
  expect(stored).toMatchObject({ id: brief.id, tenantSeq: brief.tenantSeq, prevHash: brief.prevHash, recordHash: brief.recordHash, entry: e });
  expect(await client.verify({ tenantId })).toMatchObject({ valid: true, recordCount: 2 });
});

describe("record ids are the tenant's own (tenant_seq + 1), never the global row key", () => {
  it('numbers each tenant 1..n in every answer, however the tenants interleave; verification names the tenant id', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    // b appends first and in between: a's ids do not move
    for (let i = 0; i < 3; i++) await client.append({ tenantId: b, entry: entry(), eventKind: '', appendKey: '' });
    const answers = [];
    for (let i = 0; i < 5; i++) {
      answers.push(await client.appendStream({ tenantId: a, entry: entry(), eventKind: '', omitEntry: i % 2 === 0, appendKey: randomUUID() }));
      await client.append({ tenantId: b, entry: entry(), eventKind: '', appendKey: '' });
    }
    expect(answers.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect(answers.map((r) => r.tenantSeq)).toEqual([0, 1, 2, 3, 4]);
    const listed = (await client.listRecords({ tenantId: a, limit: 100, sessionId: '', chronological: true, memberId: '' })).records;
    expect(listed.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
    expect((await client.listRecords({ tenantId: b, limit: 100, sessionId: '', chronological: false, memberId: '' })).records.map((r) => r.id)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect((await client.getByAction({ tenantId: a, actionId: listed[3].entry!.actionId })).records.map((r) => r.id)).toEqual([4]);
    // the global row keys are elsewhere: b's records sit between a's in the one shared sequence
    const keys = await db.selectFrom('audit_records').select(['id', 'tenant_seq']).where('tenant_id', '=', a).orderBy('tenant_seq').execute();
    expect(keys.map((k) => Number(k.id))).not.toEqual([1, 2, 3, 4, 5]);
    expect(Number(keys[1].id) - Number(keys[0].id)).toBeGreaterThan(1);

    // a broken chain is reported at the tenant's record id of the first failing record
    await sql`UPDATE audit_records SET decision = 'tampered' WHERE tenant_id = ${a} AND tenant_seq = 2`.execute(db);
    expect(await client.verify({ tenantId: a })).toMatchObject({ valid: false, recordCount: 2, failedAtRecordId: 3, failedAtActionId: listed[2].entry!.actionId, reason: 'hash_mismatch' });
    await sql`UPDATE audit_records SET decision = ${listed[2].entry!.decision} WHERE tenant_id = ${a} AND tenant_seq = 2`.execute(db);
    expect(await client.verify({ tenantId: a })).toMatchObject({ valid: true, recordCount: 5, failedAtRecordId: 0 });
  });
});

describe('idempotent appends (append_key)', () => {
  const outboxRows = async (actionId: string) =>
    Number((await db.selectFrom('event_outbox').select((eb) => eb.fn.countAll().as('n')).where(sql`event->>'action_id'`, '=', actionId).executeTakeFirstOrThrow()).n);

  it('answers an append sent again under the same key with the first record, over the stream too', async () => {
    const tenantId = randomUUID();
    const e = entry();
    const req = { tenantId, entry: e, eventKind: 'allowed', omitEntry: true, appendKey: randomUUID() };
    const first = await client.appendStream(req);
    expect(first.eventQueued).toBe(true);
    const again = await client.appendStream(req);
    const unary = await client.append(req);
    // the same record (the time each answer took in the service is its own)
    const record = (r: typeof first) => ({ ...r, commitMs: undefined });
    expect(record(again)).toEqual(record(first));
    expect(record(unary)).toEqual(record(first));
    expect((await client.getByAction({ tenantId, actionId: e.actionId })).records).toHaveLength(1);
    expect(await client.verify({ tenantId })).toMatchObject({ valid: true, recordCount: 1 });
    // the event was written once, with the first attempt's commit
    await new Promise((r) => setTimeout(r, 50));
    expect(await outboxRows(e.actionId)).toBeLessThanOrEqual(1);
  });

  it('writes one record for concurrent appends of one key (one batch or several), and a new key appends', async () => {
    const tenantId = randomUUID();
    const e = entry();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 12 }, () => client.appendStream({ tenantId, entry: e, eventKind: '', omitEntry: true, appendKey: key })));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    const other = await client.appendStream({ tenantId, entry: e, eventKind: '', omitEntry: true, appendKey: randomUUID() });
    expect(other.id).not.toBe(answers[0].id);
    expect(other.prevHash).toBe(answers[0].recordHash);
    expect(await client.verify({ tenantId })).toMatchObject({ valid: true, recordCount: 2 });
  });

  it('keys are per tenant, and a malformed key is a 422-style input error', async () => {
    const key = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const [ea, eb] = [entry(), entry()];
    const ra = await client.appendStream({ tenantId: a, entry: ea, eventKind: '', omitEntry: true, appendKey: key });
    const rb = await client.appendStream({ tenantId: b, entry: eb, eventKind: '', omitEntry: true, appendKey: key });
    // b's append is written, not answered with a's record: each tenant has its own first record
    expect([ra.id, rb.id]).toEqual([1, 1]);
    expect(rb.recordHash).not.toBe(ra.recordHash);
    expect((await client.getByAction({ tenantId: b, actionId: eb.actionId })).records.map((r) => r.entry!.actionId)).toEqual([eb.actionId]);
    expect((await client.getByAction({ tenantId: a, actionId: eb.actionId })).records).toHaveLength(0);
    const bad = await client.appendStream({ tenantId: a, entry: entry(), eventKind: '', omitEntry: true, appendKey: 'has space' }).catch((err: { code?: string }) => err);
    expect(bad).toMatchObject({ code: 'invalid_input' });
  });
});

describe('decision inputs: committed with the record, read back by GetDecisionInputs', () => {
  const inputOf = (e: pb.AuditEntry): decision.DecisionInput => ({
    actionId: e.actionId,
    call: { agentId: e.agentId, agentType: e.agentType, agentVersion: e.agentVersion, tool: e.tool, method: e.method, paramsJson: '{"to":{"$pii":"envelope"},"amount":150.5}', piiDetected: true, sessionId: 'sess-1' },
    behavioral: { actionCount1h: 3, actionCount24h: 40, toolCount24h: 7, violationCount24h: 1, anomalyScore: 0.4213, lastActionSecondsAgo: 12, sessionTotalAmount: 99.5 },
    decision: 'requires_human',
    violations: ['amount_above_threshold'],
    severity: 'medium',
    bundleRevision: 'rev-1',
    passes: 2,
    evaluatedAt: '2026-11-25T10:11:12.345Z',
  });

  it('answers the message it was given, for its tenant only; unknown and malformed ids are left out', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const e = entry();
    const input = inputOf(e);
    await client.appendStream({ tenantId: a, entry: e, eventKind: '', omitEntry: true, appendKey: randomUUID(), decisionInput: input });
    const none = entry();
    await client.append({ tenantId: a, entry: none, eventKind: '', appendKey: '' });
    const got = await client.getDecisionInputs({ tenantId: a, actionIds: [e.actionId, none.actionId, randomUUID(), 'not-a-uuid'] });
    // the params come back as the same JSON value (jsonb may reorder keys, so compare parsed)
    expect(got.inputs).toHaveLength(1);
    expect({ ...got.inputs[0], call: { ...got.inputs[0].call, paramsJson: JSON.parse(got.inputs[0].call!.paramsJson) } }).toEqual({ ...input, call: { ...input.call, paramsJson: JSON.parse(input.call!.paramsJson) } });
    expect((await client.getDecisionInputs({ tenantId: b, actionIds: [e.actionId] })).inputs).toEqual([]);
    // a session-less call without behavioral data
    const bare = entry();
    await client.append({ tenantId: a, entry: bare, eventKind: '', appendKey: '', decisionInput: { ...inputOf(bare), behavioral: undefined, call: { ...inputOf(bare).call!, sessionId: '' } } });
    const [back] = (await client.getDecisionInputs({ tenantId: a, actionIds: [bare.actionId] })).inputs;
    expect(back.behavioral).toBeUndefined();
    expect(back.call!.sessionId).toBe('');
  });

  it('refuses a malformed input with INVALID_ARGUMENT and writes nothing', async () => {
    const tenantId = randomUUID();
    const e = entry();
    const bad = await client.append({ tenantId, entry: e, eventKind: '', appendKey: '', decisionInput: { ...inputOf(e), call: { ...inputOf(e).call!, paramsJson: '{' } } }).catch((err) => err);
    expect(bad.code).toBe('invalid_input');
    expect(bad.detail[0].loc).toEqual(['decision_input', 'call', 'params_json']);
    const noTime = await client.append({ tenantId, entry: e, eventKind: '', appendKey: '', decisionInput: { ...inputOf(e), evaluatedAt: 'yesterday' } }).catch((err) => err);
    expect(noTime.detail[0].loc).toEqual(['decision_input', 'evaluated_at']);
    expect((await client.listRecords({ tenantId, limit: 10, sessionId: '', chronological: false, memberId: '' })).records).toEqual([]);
    const tooMany = await client.getDecisionInputs({ tenantId, actionIds: Array.from({ length: 1001 }, () => randomUUID()) }).catch((err) => err);
    expect(tooMany.code).toBe('invalid_input');
  });
});
