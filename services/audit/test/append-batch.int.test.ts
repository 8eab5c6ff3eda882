/**
 * `audit_append_batch` set-based (migration 0027) against the real local Postgres: a batch of several
 * tenants, some entries under append keys already used (in an earlier batch or earlier in the same
 * batch), writes exactly the new records, linked and hashed in the batch's order, with their replay
 * inputs and outbox events, and answers the others `replayed` with the record their key wrote.
 */
import { randomUUID } from 'node:crypto';
import { type Db, TEST_DATABASE_URL, createDb, openTestDb } from '@agw/shared';
import { sql } from 'kysely';
import { AuditChain } from '../src/chain/audit-chain';
import { type BatchAppend, AuditRecordRepository } from '../src/chain/audit-record.repository';
import { GENESIS, canonicalContent, recordHash } from '../src/chain/record-hash';
import { decisionInputOf, governedEntry } from './support/entries';

let db: Db;
let repo: AuditRecordRepository;

beforeAll(async () => {
  db = await openTestDb();
  repo = new AuditRecordRepository(db);
});
afterAll(() => db.destroy());

function item(tenantId: string, appendKey?: string): BatchAppend {
  const entry = governedEntry();
  return {
    tenantId,
    entry,
    canonical: canonicalContent(entry),
    appendKey,
    replay: decisionInputOf(entry),
    event: { subject: `TEST.decisions.${tenantId}.allowed`, event: { event_id: randomUUID(), action_id: entry.action_id } },
  };
}

const rowsOf = (tenantId: string) =>
  db.selectFrom('audit_records').select(['id', 'tenant_seq', 'action_id', 'prev_hash', 'record_hash', 'append_key']).where('tenant_id', '=', tenantId).orderBy('tenant_seq').execute();
const count = async (table: 'audit_decision_inputs', tenantId: string) =>
  Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()).n);
const outboxOf = (actionIds: string[]) => db.selectFrom('event_outbox').select(['id', 'event']).where(sql<boolean>`event->>'action_id' = ANY(${actionIds}::text[])`).execute();

it('writes only new records, in order, and answers used keys with their records', async () => {
  const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
  // an earlier batch: two of a's keys and one of b's are used
  const earlier = [item(a, 'k1'), item(a, 'k2'), item(b, 'k1'), item(a)];
  const first = await repo.appendBatch(earlier);
  expect(first.map((r) => [r.record.tenant_seq, r.replayed])).toEqual([[0, false], [1, false], [0, false], [2, false]]);

  // the next batch, tenants interleaved (the repository sorts them; answers come back in input order):
  // a used key in the middle, a key used twice in this batch, a key of a used by c (per tenant: new)
  const batch = [item(a, 'k3'), item(b, 'k1'), item(c, 'k1'), item(a, 'k2'), item(a, 'k4'), item(a, 'k4'), item(b), item(c, 'k2')];
  const out = await repo.appendBatch(batch);
  expect(out.map((r) => r.replayed)).toEqual([false, true, false, true, false, true, false, false]);
  // replayed answers are the records the keys wrote, with no outbox row
  expect(out[1].record).toMatchObject({ id: first[2].record.id, tenant_seq: 0, record_hash: first[2].record.record_hash });
  expect(out[3].record).toMatchObject({ id: first[1].record.id, tenant_seq: 1, record_hash: first[1].record.record_hash });
  expect(out[5].record).toMatchObject({ id: out[4].record.id, tenant_seq: out[4].record.tenant_seq, record_hash: out[4].record.record_hash });
  for (const i of [1, 3, 5]) expect(out[i].outboxId).toBeNull();
  // new records continue each chain without a gap, in the batch's order
  expect([out[0], out[4]].map((r) => r.record.tenant_seq)).toEqual([3, 4]);
  expect(out[6].record.tenant_seq).toBe(1);
  expect([out[2], out[7]].map((r) => r.record.tenant_seq)).toEqual([0, 1]);

  for (const [tenant, n] of [[a, 5], [b, 2], [c, 2]] as const) {
    const rows = await rowsOf(tenant);
    expect(rows.map((r) => Number(r.tenant_seq))).toEqual(Array.from({ length: n }, (_, i) => i));
    let prev = GENESIS;
    for (const r of rows) {
      expect(r.prev_hash).toBe(prev);
      prev = r.record_hash;
    }
    // the head row moved with the chain
    const head = await db.selectFrom('audit_chain_heads').select(['last_hash', 'record_count']).where('tenant_id', '=', tenant).executeTakeFirstOrThrow();
    expect([head.last_hash, Number(head.record_count)]).toEqual([prev, n]);
    // one replay input per record written
    expect(await count('audit_decision_inputs', tenant)).toBe(n);
  }
  // each record's hash recomputes from its content and its predecessor, as verify checks
  const chain = new AuditChain(repo, { tamperDemo: false });
  for (const t of [a, b, c]) expect(await chain.verify(t)).toMatchObject({ valid: true });
  const byId = new Map((await rowsOf(a)).map((r) => [r.action_id, r]));
  expect(byId.get(batch[0].entry.action_id)?.record_hash).toBe(recordHash({ ...batch[0].entry }, byId.get(batch[0].entry.action_id)?.prev_hash as string));

  // one outbox event per new record, carrying the tenant's record id and the record's hash
  const written = [0, 2, 4, 6, 7];
  const events = await outboxOf(batch.map((x) => x.entry.action_id));
  expect(events).toHaveLength(written.length);
  for (const i of written) {
    const ev = events.find((e) => Number(e.id) === out[i].outboxId)?.event as Record<string, unknown>;
    expect(ev).toMatchObject({ action_id: batch[i].entry.action_id, record_id: out[i].record.tenant_seq + 1, record_hash: out[i].record.record_hash });
    expect(out[i].event?.event).toMatchObject({ record_id: out[i].record.tenant_seq + 1, record_hash: out[i].record.record_hash });
  }
});

it('answers a batch of only used keys without writing anything', async () => {
  const t = randomUUID();
  const first = await repo.appendBatch([item(t, 'x'), item(t, 'y')]);
  const again = await repo.appendBatch([item(t, 'y'), item(t, 'x'), item(t, 'y')]);
  expect(again.map((r) => [r.record.id, r.replayed])).toEqual([[first[1].record.id, true], [first[0].record.id, true], [first[1].record.id, true]]);
  expect((await rowsOf(t)).length).toBe(2);
  const head = await db.selectFrom('audit_chain_heads').select(['record_count']).where('tenant_id', '=', t).executeTakeFirstOrThrow();
  expect(Number(head.record_count)).toBe(2);
});

describe('a batch of one (audit_append_one, migration 0029)', () => {
  it('writes the same rows as the batch function; a tenant’s first append and a used key go to the batch function', async () => {
    const t = randomUUID();
    const one = (x: BatchAppend) => sql<{ id: string }>`SELECT * FROM audit_append_one(${JSON.stringify({ tenant_id: x.tenantId, canonical: x.canonical, ...x.entry, replay: null, subject: null, event: null, append_key: x.appendKey ?? null })}::jsonb)`.execute(db);
    // no head row yet: the one-statement function writes nothing
    expect((await one(item(t, 'probe'))).rows).toEqual([]);
    expect(await rowsOf(t)).toEqual([]);

    const first = await repo.appendBatch([item(t, 'k1')]); // the batch function: creates the head row
    const fast = [item(t, 'k2'), item(t), item(t, 'k3')];
    const written = [];
    for (const x of fast) written.push((await repo.appendBatch([x]))[0]);
    expect([first[0], ...written].map((r) => [r.record.tenant_seq, r.replayed])).toEqual([[0, false], [1, false], [2, false], [3, false]]);
    // a used key: nothing written by the one-statement function, the batch function answers the key's record
    const used = item(t, 'k2');
    expect((await one(used)).rows).toEqual([]);
    const again = await repo.appendBatch([used]);
    expect(again[0]).toMatchObject({ replayed: true, outboxId: null, record: { id: written[0].record.id, tenant_seq: 1, record_hash: written[0].record.record_hash } });

    const rows = await rowsOf(t);
    expect(rows.map((r) => [Number(r.tenant_seq), r.append_key])).toEqual([[0, 'k1'], [1, 'k2'], [2, null], [3, 'k3']]);
    let prev = GENESIS;
    for (const r of rows) {
      expect(r.prev_hash).toBe(prev);
      prev = r.record_hash;
    }
    const head = await db.selectFrom('audit_chain_heads').select(['last_hash', 'record_count']).where('tenant_id', '=', t).executeTakeFirstOrThrow();
    expect([head.last_hash, Number(head.record_count)]).toEqual([prev, 4]);
    expect(await count('audit_decision_inputs', t)).toBe(4);
    const events = await outboxOf(fast.map((x) => x.entry.action_id));
    expect(events).toHaveLength(3);
    written.forEach((w, i) => {
      const ev = events.find((e) => Number(e.id) === w.outboxId)?.event as Record<string, unknown>;
      expect(ev).toMatchObject({ action_id: fast[i].entry.action_id, record_id: w.record.tenant_seq + 1, record_hash: w.record.record_hash });
    });
    const chain = new AuditChain(repo, { tamperDemo: false });
    expect(await chain.verify(t)).toMatchObject({ valid: true, record_count: 4 });
  });

  it('keeps one tenant’s chain whole when two audit replicas append one record at a time, concurrently', async () => {
    const t = randomUUID();
    await repo.appendBatch([item(t)]);
    const other = createDb(TEST_DATABASE_URL);
    try {
      const replicas = [repo, new AuditRecordRepository(other)];
      const out = await Promise.all(Array.from({ length: 80 }, (_, i) => replicas[i % 2].appendBatch([item(t, `c${i}`)])));
      expect(out.every((r) => !r[0].replayed)).toBe(true);
      const seqs = out.map((r) => r[0].record.tenant_seq).sort((x, y) => x - y);
      expect(seqs).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
      const rows = await rowsOf(t);
      let prev = GENESIS;
      for (const r of rows) {
        expect(r.prev_hash).toBe(prev);
        prev = r.record_hash;
      }
      expect(await new AuditChain(repo, { tamperDemo: false }).verify(t)).toMatchObject({ valid: true, record_count: 81 });
    } finally {
      await other.destroy();
    }
  });
});
