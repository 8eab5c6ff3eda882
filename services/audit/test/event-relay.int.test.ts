/**
 * The audit service's batched publish of committed events, against the real Postgres and NATS:
 * - a batch's events published together are all on the stream once, a second publish of the same events is
 *   acked as a duplicate and not stored again;
 * - a subject without a stream fails at once (no ack), never counted as published;
 * - the relay's NATS connection cut while batches are being published: no outbox row of an event that did
 *   not reach the stream is deleted; the sweep of another replica publishes the rest; every committed
 *   record's event is on the stream exactly once and the chain verifies;
 * - the sweep takes the decisions of tenants without a webhook (`nohook.decisions.`) as well.
 */
import { randomUUID } from 'node:crypto';
import { BatchPublisher, type Bus, type Db, closeTestBus, createLogger, openTestBus, openTestDb, streams, subjects } from '@agw/shared';
import { sql } from 'kysely';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { AuditChain } from '../src/chain/audit-chain';
import { EventRelay } from '../src/chain/event-relay';
import { governedEntry } from './support/entries';

jest.setTimeout(60_000);

const prefix = `ER${randomUUID().replace(/-/g, '').slice(0, 10)}`;
let db: Db;
let bus: Bus;

beforeAll(async () => {
  db = await openTestDb();
  bus = await openTestBus(prefix, 'event-relay-test');
});
afterAll(async () => {
  await closeTestBus(bus);
  await db.destroy();
});

const outboxOf = (actionIds: string[]) =>
  actionIds.length ? db.selectFrom('event_outbox').select(['id']).where(sql<boolean>`event->>'action_id' = ANY(${actionIds}::text[])`).execute() : Promise.resolve([]);

/** every message on the test stream's decision subjects of these tenants: action id → how many times */
async function onStream(tenants: string[]): Promise<Map<string, number>> {
  const jsm = await bus.nc.jetstreamManager();
  const name = streams(prefix).decisions.name;
  const { state } = await jsm.streams.info(name);
  const c = await bus.js.consumers.get(name);
  const seen = new Map<string, number>();
  let read = 0;
  while (read < state.messages) {
    const batch = await c.fetch({ max_messages: 500, expires: 1000 });
    let n = 0;
    for await (const m of batch) {
      n++;
      const e = m.json<{ action_id: string; tenant_id: string }>();
      if (tenants.includes(e.tenant_id)) seen.set(e.action_id, (seen.get(e.action_id) ?? 0) + 1);
    }
    if (!n) break;
    read += n;
  }
  return seen;
}

const decisionSubject = (tenant: string) => `${prefix}.decisions.${tenant}.allowed`;

it('publishes a batch together: every event acked and stored once, a second publish acked as a duplicate', async () => {
  const publisher = new BatchPublisher(bus.nc);
  const tenant = randomUUID();
  const items = Array.from({ length: 50 }, () => ({ subject: decisionSubject(tenant), event: { event_id: randomUUID(), action_id: randomUUID(), tenant_id: tenant } }));
  expect(await publisher.publishAll(items)).toEqual(items.map(() => null));
  expect(await publisher.publishAll(items.slice(0, 10))).toEqual(items.slice(0, 10).map(() => null));
  const seen = await onStream([tenant]);
  expect(seen.size).toBe(50);
  expect([...seen.values()].every((n) => n === 1)).toBe(true);

  // no stream for the subject: every event fails, at once
  const t0 = Date.now();
  const failed = await publisher.publishAll([{ subject: `${prefix}.nostream.${tenant}`, event: { event_id: randomUUID() } }]);
  expect(failed[0]).toBeInstanceOf(Error);
  expect(Date.now() - t0).toBeLessThan(4000);
  publisher.close();
});

it('the relay\'s connection cut mid-batch: no row of an unacked event is deleted; the sweep publishes the rest, each event once', async () => {
  const relayBus = await openTestBus(prefix, 'event-relay-cut');
  const relay = new EventRelay(relayBus, db, createLogger('test', 'silent'), { deleteEveryMs: 20 });
  relay.start();
  let batches = 0;
  const chain = new AuditChain(new AuditRecordRepository(db), {
    tamperDemo: false,
    streamPrefix: prefix,
    maxBatch: 20,
    onCommitted: (b) => {
      relay.committed(b);
      // cut the relay's NATS connection right after its third batch was handed to it (publishes in flight)
      if (++batches === 3) void relayBus.nc.close();
    },
  });
  const tenants = [randomUUID(), randomUUID()];
  const appended = await Promise.all(Array.from({ length: 300 }, (_, i) => chain.append(tenants[i % 2], governedEntry({ params: { i } }), { eventKind: 'allowed' })));
  const ids = appended.map((r) => r.action_id);
  expect(batches).toBeGreaterThan(3);
  await new Promise((r) => setTimeout(r, 300));
  await relay.stop();

  // every row gone from the outbox is an event the stream has
  const left = new Set((await db.selectFrom('event_outbox').select(sql<string>`event->>'action_id'`.as('a')).where(sql<boolean>`event->>'action_id' = ANY(${ids}::text[])`).execute()).map((r) => r.a));
  const before = await onStream(tenants);
  expect(ids.filter((id) => !left.has(id) && !before.has(id))).toEqual([]);
  expect(left.size).toBeGreaterThan(0); // the cut left events behind

  // another replica's sweep publishes them
  const other = new EventRelay(bus, db, createLogger('test', 'silent'));
  for (let i = 0; i < 10 && (await outboxOf(ids)).length; i++) await other.sweep(0);
  expect(await outboxOf(ids)).toHaveLength(0);
  const after = await onStream(tenants);
  expect(ids.filter((id) => after.get(id) !== 1)).toEqual([]);
  expect(after.size).toBe(300);
  for (const t of tenants) expect(await new AuditChain(new AuditRecordRepository(db), { tamperDemo: false }).verify(t)).toEqual({ valid: true, record_count: 150 });
});

it("sweeps only the audit service's rows: a gateway's or managed service's failed publish is theirs to relay", async () => {
  const tenant = randomUUID();
  const mine = { event_id: randomUUID(), action_id: randomUUID(), tenant_id: tenant };
  const theirs = { event_id: randomUUID(), action_id: randomUUID(), tenant_id: tenant };
  // as audit_append_batch writes it (no owner: 'audit') and as the gateway's relay keeps a failed publish
  await db.insertInto('event_outbox').values({ subject: decisionSubject(tenant), event: JSON.stringify(mine), attempts: 0 }).execute();
  await db.insertInto('event_outbox').values({ subject: decisionSubject(tenant), event: JSON.stringify(theirs), attempts: 1, owner: 'gateway' }).execute();
  const relay = new EventRelay(bus, db, createLogger('test', 'silent'));
  for (let i = 0; i < 10 && (await outboxOf([mine.action_id])).length; i++) await relay.sweep(0);
  expect(await outboxOf([mine.action_id])).toHaveLength(0);
  expect(await outboxOf([theirs.action_id])).toHaveLength(1);
  const seen = await onStream([tenant]);
  expect(seen.get(mine.action_id)).toBe(1);
  expect(seen.has(theirs.action_id)).toBe(false);
  await db.deleteFrom('event_outbox').where(sql<boolean>`event->>'action_id' = ${theirs.action_id}`).execute();
});

it('sweeps the decisions of tenants without a webhook too (nohook.decisions.), onto the same stream', async () => {
  const tenant = randomUUID();
  const quiet = { event_id: randomUUID(), action_id: randomUUID(), tenant_id: tenant };
  await db.insertInto('event_outbox').values({ subject: subjects.decision(prefix, tenant, 'allowed', null, false), event: JSON.stringify(quiet), attempts: 0 }).execute();
  const relay = new EventRelay(bus, db, createLogger('test', 'silent'));
  for (let i = 0; i < 10 && (await outboxOf([quiet.action_id])).length; i++) await relay.sweep(0);
  expect(await outboxOf([quiet.action_id])).toHaveLength(0);
  expect((await onStream([tenant])).get(quiet.action_id)).toBe(1);
  const jsm = await bus.nc.jetstreamManager();
  const msg = await jsm.streams.getMessage(streams(prefix).decisions.name, { last_by_subj: `${prefix}.nohook.decisions.${tenant}.allowed` });
  expect(msg.json<{ action_id: string }>().action_id).toBe(quiet.action_id);
});

it('warns at start when autovacuum is off for the outbox, and only then', async () => {
  const warnings: string[] = [];
  const logger = createLogger('event-relay-test', 'silent');
  logger.warn = ((_o: unknown, msg?: string) => void warnings.push(String(msg))) as typeof logger.warn;
  const relay = new EventRelay(bus, db, logger);
  const server = (await sql<{ a: string }>`SELECT current_setting('autovacuum') AS a`.execute(db)).rows[0].a;
  expect(await relay.checkAutovacuum()).toBe(server === 'on');
  expect(warnings.some((w) => w.startsWith('autovacuum is off'))).toBe(server !== 'on');
  // the table's own switch counts too
  await sql`ALTER TABLE event_outbox SET (autovacuum_enabled = false)`.execute(db);
  try {
    warnings.length = 0;
    expect(await relay.checkAutovacuum()).toBe(false);
    expect(warnings.filter((w) => w.startsWith('autovacuum is off'))).toHaveLength(1);
  } finally {
    await sql`ALTER TABLE event_outbox RESET (autovacuum_enabled)`.execute(db);
  }
});
