/**
 * Chain verification (chain-verify.ts) against the real local Postgres: every kind of tampering is found
 * at the first altered record in chain order, with the same answer whether the chain is walked in one
 * thread or split into ranges verified by worker threads (the compiled worker, dist/: `npm test` builds
 * first). Timing lives in `npm run bench:chain`, never here.
 */
import { randomUUID } from 'node:crypto';
import { type Db, TEST_DATABASE_URL, canonicalJson, openTestDb } from '@agw/shared';
import { sql } from 'kysely';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { AuditChain } from '../src/chain/audit-chain';
import { joinRanges, verifyChain } from '../src/chain/chain-verify';
import { type ChainEntry, canonicalContent, hashedContent, recordHash } from '../src/chain/record-hash';
import { governedEntry } from './support/entries';
let db: Db;
let repo: AuditRecordRepository;
const N = 240;

const entry = (i: number): ChainEntry =>
  governedEntry({ params: { q: `query ${i} é 😀`, n: i, nested: { list: [i, 'two', null, true] } }, details: { stage: 'policy', i }, session_id: i % 3 ? null : `s-${i}` });

/** a fresh tenant with an N-record chain appended through the service's path */
async function chainOf(n = N): Promise<{ t: string; chain: AuditChain }> {
  const t = randomUUID();
  const chain = new AuditChain(repo, { tamperDemo: false });
  for (let i = 0; i < n; i += 60) await Promise.all(Array.from({ length: Math.min(60, n - i) }, (_, k) => chain.append(t, entry(i + k))));
  return { t, chain };
}

/** one walk in this thread, and 4 ranges (this thread + 3 worker threads; 3 ranges where a test needs them) */
const allModes = async (t: string, modes = [1, 4]) => {
  const out = [];
  for (const threads of modes) out.push(await verifyChain(repo, t, N, { databaseUrl: TEST_DATABASE_URL, threads, minRecords: 0 }));
  return out;
};
const rowAt = async (t: string, seq: number) =>
  (await db.selectFrom('audit_records').select(['id', 'action_id', 'record_hash', 'prev_hash']).where('tenant_id', '=', t).where('tenant_seq', '=', seq).executeTakeFirstOrThrow());
/** the record id the tenant sees for the record at chain position `seq` (never the global row key `id`) */
const recordIdAt = (seq: number) => seq + 1;

jest.setTimeout(300_000); // a slow shared machine; worker threads start with their own module loading

beforeAll(async () => {
  db = await openTestDb();
  repo = new AuditRecordRepository(db);
});
afterAll(async () => {
  await db.destroy();
});

describe('chain verification', () => {
  it('canonical JSON of the hashed content is exactly canonicalJson(hashedContent(entry)) for every shape', () => {
    const shapes: Array<Partial<ChainEntry>> = [
      {},
      { params: {}, details: {}, violations: [] },
      { params: { 'é': 1, e: 2, E: 3, '😀': 4, '\u2028': 5, '': 6, a: { z: [1e21, 1e-7, -0, 0.1, 12345678901234] } } },
      { alert_tier: 'P1', execution_mode: null, session_id: 's', requires_human: true, violations: ['b', 'a'] },
      { agent_id: 'quote " backslash \\ control \u0001 line \n', tool: '日本語' },
      { details: { nested: [{ b: 1, a: [null, true, false, 'x'] }] } },
      { alert_tier: undefined, session_id: undefined } as Partial<ChainEntry>,
    ];
    for (const s of shapes) {
      const e = governedEntry(s);
      expect(canonicalContent(e)).toBe(canonicalJson(hashedContent(e)));
    }
  });

  it('a valid chain is valid in every mode', async () => {
    const { t } = await chainOf();
    for (const v of await allModes(t, [1, 2, 3, 4])) expect(v).toEqual({ valid: true, record_count: N });
    // ranges larger than the chain head says (records appended meanwhile) are still walked to the end
    expect(await verifyChain(repo, t, N / 2, { databaseUrl: TEST_DATABASE_URL, threads: 3, minRecords: 0 })).toEqual({ valid: true, record_count: N });
    expect(await verifyChain(repo, randomUUID(), 0, { databaseUrl: TEST_DATABASE_URL, threads: 2, minRecords: 0 })).toEqual({ valid: true, record_count: 0 });
  });

  // first record, range boundaries of 4 ranges (60, 120, 180: a range's first record and the record before it), last record
  const positions = [0, 59, 60, 119, 120, 181, N - 1];

  it.each([
    ['a hashed field (decision)', 'decision', (t: string, seq: number) => sql`UPDATE audit_records SET decision = 'deny_tampered' WHERE tenant_id = ${t} AND tenant_seq = ${seq}`],
    ['the params (jsonb)', 'params', (t: string, seq: number) => sql`UPDATE audit_records SET params = params || '{"q":"changed"}' WHERE tenant_id = ${t} AND tenant_seq = ${seq}`],
    ['the time (requested_at)', 'requested_at', (t: string, seq: number) => sql`UPDATE audit_records SET requested_at = requested_at + interval '1 millisecond' WHERE tenant_id = ${t} AND tenant_seq = ${seq}`],
    ['a nullable field (session_id)', 'session_id', (t: string, seq: number) => sql`UPDATE audit_records SET session_id = coalesce(session_id, '') || 'x' WHERE tenant_id = ${t} AND tenant_seq = ${seq}`],
    ['the record_hash', 'record_hash', (t: string, seq: number) => sql`UPDATE audit_records SET record_hash = repeat('0', 64) WHERE tenant_id = ${t} AND tenant_seq = ${seq}`],
    ['the prev_hash', 'prev_hash', (t: string, seq: number) => sql`UPDATE audit_records SET prev_hash = repeat('1', 64) WHERE tenant_id = ${t} AND tenant_seq = ${seq}`],
  ] as const)('finds %s altered, at the altered record, in every mode', async (_what, column, alter) => {
    const { t } = await chainOf();
    for (const seq of positions) {
      const before = await sql<{ v: unknown }>`SELECT ${sql.ref(column)} AS v FROM audit_records WHERE tenant_id = ${t} AND tenant_seq = ${seq}`.execute(db);
      await alter(t, seq).execute(db);
      const r = await rowAt(t, seq);
      for (const v of await allModes(t)) expect(v).toEqual({ valid: false, record_count: seq, failed_at_action_id: r.action_id, failed_at_record_id: recordIdAt(seq), reason: 'hash_mismatch' });
      await sql`UPDATE audit_records SET ${sql.ref(column)} = ${column === 'params' ? JSON.stringify(before.rows[0].v) : before.rows[0].v} WHERE tenant_id = ${t} AND tenant_seq = ${seq}`.execute(db);
      expect(await verifyChain(repo, t, N)).toEqual({ valid: true, record_count: N });
    }
  });

  it('finds a deleted record at the next one, and a deleted range at the next range', async () => {
    const { t } = await chainOf();
    await db.deleteFrom('audit_records').where('tenant_id', '=', t).where('tenant_seq', '=', 120).execute();
    const next = await rowAt(t, 121);
    for (const v of await allModes(t)) expect(v).toMatchObject({ valid: false, record_count: 120, failed_at_action_id: next.action_id, failed_at_record_id: recordIdAt(121) });
    // a whole range deleted (range 1 of 4 is 60..119): the next range's first link must still match
    const { t: t2 } = await chainOf();
    await db.deleteFrom('audit_records').where('tenant_id', '=', t2).where('tenant_seq', '>=', 60).where('tenant_seq', '<', 120).execute();
    const after = await rowAt(t2, 120);
    for (const v of await allModes(t2)) expect(v).toMatchObject({ valid: false, record_count: 60, failed_at_action_id: after.action_id, failed_at_record_id: recordIdAt(120) });
  });

  it('finds two records swapped in chain order', async () => {
    const { t } = await chainOf();
    const [a, b] = [await rowAt(t, 100), await rowAt(t, 150)];
    await sql`UPDATE audit_records SET tenant_seq = -1 WHERE id = ${a.id}`.execute(db);
    await sql`UPDATE audit_records SET tenant_seq = 100 WHERE id = ${b.id}`.execute(db);
    await sql`UPDATE audit_records SET tenant_seq = 150 WHERE id = ${a.id}`.execute(db);
    // b now sits at position 100: it is named as the log would show it there
    for (const v of await allModes(t)) expect(v).toMatchObject({ valid: false, record_count: 100, failed_at_action_id: b.action_id, failed_at_record_id: recordIdAt(100) });
  });

  it('finds a forged record whose hash is recomputed, at the next record (its link no longer matches)', async () => {
    const { t } = await chainOf();
    const r = await rowAt(t, 200);
    const rec = (await repo.byAction(t, r.action_id))[0];
    const forged = { ...rec, decision: 'deny' };
    await sql`UPDATE audit_records SET decision = 'deny', record_hash = ${recordHash(forged, rec.prev_hash)} WHERE id = ${r.id}`.execute(db);
    const next = await rowAt(t, 201);
    for (const v of await allModes(t)) expect(v).toMatchObject({ valid: false, record_count: 201, failed_at_action_id: next.action_id, failed_at_record_id: recordIdAt(201) });
  });

  it('reports the first failure in chain order when several ranges fail', async () => {
    const { t } = await chainOf();
    await sql`UPDATE audit_records SET decision = 'x' WHERE tenant_id = ${t} AND tenant_seq IN (30, 130, 230)`.execute(db);
    const first = await rowAt(t, 30);
    for (const v of await allModes(t, [1, 2, 3, 4])) expect(v).toMatchObject({ valid: false, record_count: 30, failed_at_action_id: first.action_id, failed_at_record_id: recordIdAt(30) });
  });

  it('reads every record exactly as a SELECT does (COPY text: escapes, NULLs, Unicode, sub-millisecond and pre-1970 times)', async () => {
    const t = randomUUID();
    const chain = new AuditChain(repo, { tamperDemo: false });
    const odd = ['tab\there', 'line\nbreak\r\n', 'back\\slash \\N', '\\N', '\b\f\v\u0001\u001f', 'é 日本語 😀 \u2028', ''];
    for (let i = 0; i < odd.length; i++) {
      await chain.append(t, governedEntry({ agent_id: odd[i], tool: `t${odd[i]}`, params: { q: odd[i], [odd[i]]: [odd[i], null, 1.5e-7] }, details: { s: odd[i] }, violations: [odd[i]], session_id: i % 2 ? odd[i] : null, alert_tier: i % 2 ? null : 'P1', requires_human: i % 2 === 0 }));
    }
    // times a writer could store that the append path never does: microseconds, before 1970, on a whole second
    await sql`UPDATE audit_records SET requested_at = '2026-01-02 03:04:05.678999+00' WHERE tenant_id = ${t} AND tenant_seq = 0`.execute(db);
    await sql`UPDATE audit_records SET requested_at = '1969-12-31 23:59:59.9995+00' WHERE tenant_id = ${t} AND tenant_seq = 1`.execute(db);
    await sql`UPDATE audit_records SET requested_at = '2026-06-30 12:00:00+02' WHERE tenant_id = ${t} AND tenant_seq = 2`.execute(db);
    const read = [];
    for await (const batch of repo.chainRecords(t, 0, null)) read.push(...batch);
    const selected = await repo.list(t, { limit: 100 });
    expect(read).toHaveLength(odd.length);
    for (const r of read) {
      const { id: _id, ...expected } = selected.find((x) => x.tenant_seq === r.tenant_seq) as (typeof selected)[number];
      expect(r).toStrictEqual(expected);
    }
    expect(read.map((r) => r.requested_at).slice(0, 3)).toEqual(['2026-01-02T03:04:05.678Z', '1969-12-31T23:59:59.999Z', '2026-06-30T10:00:00.000Z']);
    // a range, and leaving the stream early, give the connection back in a usable state
    const some = [];
    for await (const batch of repo.chainRecords(t, 2, 5)) some.push(...batch.map((r) => r.tenant_seq));
    expect(some).toEqual([2, 3, 4]);
    for await (const _batch of repo.chainRecords(t, 0, null)) break;
    expect(await verifyChain(repo, t, odd.length)).toEqual({ valid: false, record_count: 0, failed_at_action_id: read[0].action_id, failed_at_record_id: 1, reason: 'hash_mismatch' });
  });

  it('joins ranges like one walk (unit)', () => {
    expect(joinRanges([])).toEqual({ valid: true, record_count: 0 });
    const a = { count: 2, first: { prev_hash: 'GENESIS', action_id: 'a0', record_id: 1 }, last_hash: 'h2' };
    const b = { count: 3, first: { prev_hash: 'h2', action_id: 'b0', record_id: 3 }, last_hash: 'h5' };
    expect(joinRanges([a, { count: 0 }, b])).toEqual({ valid: true, record_count: 5 });
    expect(joinRanges([a, { ...b, first: { ...b.first, prev_hash: 'zz' } }])).toMatchObject({ valid: false, record_count: 2, failed_at_record_id: 3 });
    expect(joinRanges([{ ...a, fail: { index: 1, action_id: 'a1', record_id: 2 } }, b])).toMatchObject({ valid: false, record_count: 1, failed_at_record_id: 2 });
  });

  it('the service verifies with worker threads when configured (AuditChain.verify)', async () => {
    const { t } = await chainOf();
    const parallel = new AuditChain(repo, { tamperDemo: false, verify: { databaseUrl: TEST_DATABASE_URL, threads: 2, minRecords: 0 } });
    expect(await parallel.verify(t)).toEqual({ valid: true, record_count: N });
    await sql`UPDATE audit_records SET tool = 'x' WHERE tenant_id = ${t} AND tenant_seq = 150`.execute(db);
    expect(await parallel.verify(t)).toMatchObject({ valid: false, record_count: 150 });
  });
});

