/**
 * Durability of the group-committed append path against the real local Postgres and NATS JetStream:
 * every answered append has its record, its replay input and its outbox event (one transaction), chains
 * verify after a process is killed or its Postgres connections are cut mid-batch, and the outbox left
 * behind reaches the bus.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type Bus, type Db, TEST_DATABASE_URL, closeTestBus, createDb, createLogger, openTestBus, openTestDb, streams } from '@agw/shared';
import { sql } from 'kysely';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { AuditChain } from '../src/chain/audit-chain';
import { EventRelay } from '../src/chain/event-relay';
import type { ChainEntry } from '../src/chain/record-hash';
import { decisionInputOf, governedEntry } from './support/entries';

const url = TEST_DATABASE_URL;
const prefix = `GC${randomUUID().replace(/-/g, '').slice(0, 10)}`;
let db: Db;
let bus: Bus;

const entry = (over: Partial<ChainEntry> = {}): ChainEntry => governedEntry({ params: { q: 'x', n: 1 }, ...over });


beforeAll(async () => {
  db = await openTestDb();
  bus = await openTestBus(prefix, 'group-commit-test');
});
afterAll(async () => {
  await closeTestBus(bus);
  await db.destroy();
});

const outboxOf = (actionIds: string[]) =>
  actionIds.length ? db.selectFrom('event_outbox').select(['id', 'subject', 'event']).where(sql<boolean>`event->>'action_id' = ANY(${actionIds}::text[])`).execute() : Promise.resolve([]);
const recordsOf = (tenant: string) => db.selectFrom('audit_records').select(['action_id', 'tenant_seq']).where('tenant_id', '=', tenant).orderBy('tenant_seq').execute();

/** action ids published on the test stream (read with an ephemeral ordered consumer) */
async function publishedActionIds(expected: number): Promise<Set<string>> {
  const c = await bus.js.consumers.get(streams(prefix).decisions.name);
  const seen = new Set<string>();
  const until = Date.now() + 10_000;
  while (seen.size < expected && Date.now() < until) {
    const batch = await c.fetch({ max_messages: 500, expires: 1000 });
    for await (const m of batch) seen.add((m.json() as { action_id: string }).action_id);
  }
  return seen;
}

describe('group commit', () => {
  it('commits concurrent appends of many tenants with their replay input and outbox event, in per-tenant order', async () => {
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false, streamPrefix: prefix });
    const tenants = Array.from({ length: 5 }, () => randomUUID());
    const entries = tenants.flatMap((t) => Array.from({ length: 30 }, () => ({ t, e: entry() })));
    const answered = await Promise.all(entries.map(({ t, e }) => chain.append(t, e, { eventKind: 'allowed', replay: decisionInputOf(e) })));
    expect(answered.every((r) => r.event_queued)).toBe(true);
    for (const t of tenants) {
      expect(await chain.verify(t)).toEqual({ valid: true, record_count: 30 });
      // arrival order is chain order within a tenant
      expect((await recordsOf(t)).map((r) => r.action_id)).toEqual(entries.filter((x) => x.t === t).map((x) => x.e.action_id));
    }
    const ids = entries.map((x) => x.e.action_id);
    const replays = await db.selectFrom('audit_decision_inputs').select(['action_id', 'passes', 'behavioral']).where('action_id', 'in', ids).execute();
    expect(replays).toHaveLength(ids.length);
    expect(replays[0]).toMatchObject({ passes: 2, behavioral: { action_count_1h: 1 } });
    const outbox = await outboxOf(ids);
    expect(outbox).toHaveLength(ids.length);
    const byAction = new Map(answered.map((r) => [r.action_id, r]));
    const recordIdsOf = new Map<string, number[]>();
    for (const row of outbox) {
      const ev = row.event as { action_id: string; record_id: number; record_hash: string; kind: string; tenant_id: string };
      // the tenant's record id (1 for its first record), as audit_append_batch writes it, never the global row key
      expect(ev.record_id).toBe(byAction.get(ev.action_id)!.tenant_seq + 1);
      recordIdsOf.set(ev.tenant_id, [...(recordIdsOf.get(ev.tenant_id) ?? []), ev.record_id]);
      expect(ev.record_hash).toBe(byAction.get(ev.action_id)!.record_hash);
      expect(row.subject).toBe(`${prefix}.decisions.${ev.tenant_id}.allowed`);
    }
    // the five tenants appended in the same batches, and each one's events are numbered 1..30
    for (const t of tenants) expect([...(recordIdsOf.get(t) ?? [])].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await db.deleteFrom('event_outbox').where('id', 'in', outbox.map((r) => r.id)).execute();
  });

  it("puts a session's decision event on the session-bound subject, and only that one", async () => {
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false, streamPrefix: prefix });
    const t = randomUUID();
    const inSession = entry({ session_id: 'sess-42' });
    const direct = entry();
    await Promise.all([chain.append(t, inSession, { eventKind: 'pending' }), chain.append(t, direct, { eventKind: 'pending' })]);
    const outbox = await outboxOf([inSession.action_id, direct.action_id]);
    const subjectOf = (id: string) => outbox.find((r) => (r.event as { action_id: string }).action_id === id)?.subject;
    expect(subjectOf(inSession.action_id)).toBe(`${prefix}.decisions.${t}.pending.session`);
    expect(subjectOf(direct.action_id)).toBe(`${prefix}.decisions.${t}.pending`);
    await db.deleteFrom('event_outbox').where('id', 'in', outbox.map((r) => r.id)).execute();
  });

  it('puts the decision event of a tenant without a webhook under nohook.decisions., session-bound or not', async () => {
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false, streamPrefix: prefix });
    const t = randomUUID();
    const inSession = entry({ session_id: 'sess-43' });
    const direct = entry();
    const hooked = entry();
    await Promise.all([
      chain.append(t, inSession, { eventKind: 'allowed', webhook: false }),
      chain.append(t, direct, { eventKind: 'denied', webhook: false }),
      chain.append(t, hooked, { eventKind: 'denied', webhook: true }),
    ]);
    const outbox = await outboxOf([inSession.action_id, direct.action_id, hooked.action_id]);
    const subjectOf = (id: string) => outbox.find((r) => (r.event as { action_id: string }).action_id === id)?.subject;
    expect(subjectOf(inSession.action_id)).toBe(`${prefix}.nohook.decisions.${t}.allowed.session`);
    expect(subjectOf(direct.action_id)).toBe(`${prefix}.nohook.decisions.${t}.denied`);
    expect(subjectOf(hooked.action_id)).toBe(`${prefix}.decisions.${t}.denied`);
    await db.deleteFrom('event_outbox').where('id', 'in', outbox.map((r) => r.id)).execute();
  });

  it('fails only the faulty append of a batch and commits the others', async () => {
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
    const t = randomUUID();
    const results = await Promise.allSettled([
      chain.append(t, entry()),
      chain.append(t, entry({ action_id: 'not-a-uuid' })),
      chain.append(t, entry()),
      chain.append(t, entry()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await chain.verify(t)).toEqual({ valid: true, record_count: 3 });
  });

  it('loses no answered append when its Postgres connections are cut mid-batch, and the chain verifies', async () => {
    // a pool of its own (createDb's clients survive being terminated, checked out or idle)
    const local = createDb(url, { max: 4 });
    const chain = new AuditChain(new AuditRecordRepository(local), { tamperDemo: false, streamPrefix: prefix });
    const t = randomUUID();
    const answered: string[] = [];
    let failed = 0;
    let stop = false;
    const workers = Array.from({ length: 24 }, async () => {
      while (!stop) {
        const e = entry();
        await chain.append(t, e, { eventKind: 'allowed' }).then(
          () => answered.push(e.action_id),
          () => failed++,
        );
      }
    });
    const cutter = (async () => {
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 150));
        await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%audit_append_%' AND pid <> pg_backend_pid()`.execute(db);
      }
      stop = true;
    })();
    await Promise.all([cutter, ...workers]);
    await local.destroy().catch(() => undefined);
    expect(answered.length).toBeGreaterThan(50);
    expect(failed).toBeGreaterThan(0); // the cuts did hit batches in flight
    const records = await recordsOf(t);
    const stored = new Set(records.map((r) => r.action_id));
    expect(answered.filter((id) => !stored.has(id))).toEqual([]);
    expect(records.map((r) => Number(r.tenant_seq))).toEqual(records.map((_, i) => i));
    expect(await new AuditChain(new AuditRecordRepository(db), { tamperDemo: false }).verify(t)).toEqual({ valid: true, record_count: records.length });
    // record and event are one transaction: every record has its outbox row
    const outbox = await outboxOf(records.map((r) => r.action_id));
    expect(outbox).toHaveLength(records.length);
    await db.deleteFrom('event_outbox').where('id', 'in', outbox.map((r) => r.id)).execute();
  });

  it('loses no answered append when the appending process is killed mid-batch; the outbox left behind reaches the bus', async () => {
    const t = randomUUID();
    // a separate process appends with 32 in flight and prints every answered action id; SIGKILL after 400
    const dist = path.resolve(__dirname, '../dist/chain');
    const script = `
      const { createDb } = require('@agw/shared');
      const { AuditRecordRepository } = require(${JSON.stringify(`${dist}/audit-record.repository.js`)});
      const { AuditChain } = require(${JSON.stringify(`${dist}/audit-chain.js`)});
      const { randomUUID } = require('node:crypto');
      const chain = new AuditChain(new AuditRecordRepository(createDb(${JSON.stringify(url)})), { tamperDemo: false, streamPrefix: ${JSON.stringify(prefix)} });
      const entry = ${JSON.stringify(entry())};
      for (let w = 0; w < 32; w++) (async () => { for (;;) { const e = { ...entry, action_id: randomUUID(), requested_at: new Date().toISOString() };
        await chain.append(${JSON.stringify(t)}, e, { eventKind: 'allowed' }); process.stdout.write('ok ' + e.action_id + '\\n'); } })();`;
    const child = spawn(process.execPath, ['-e', script], { cwd: path.resolve(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
    const answered: string[] = [];
    await new Promise<void>((resolve) => {
      let buf = '';
      child.stdout.on('data', (b: Buffer) => {
        buf += b.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) if (l.startsWith('ok ')) answered.push(l.slice(3));
        if (answered.length >= 400 && child.exitCode === null && !child.killed) child.kill('SIGKILL');
      });
      child.once('exit', () => resolve());
    });
    expect(answered.length).toBeGreaterThanOrEqual(400);
    const records = await recordsOf(t);
    const stored = new Set(records.map((r) => r.action_id));
    expect(answered.filter((id) => !stored.has(id))).toEqual([]);
    expect(await new AuditChain(new AuditRecordRepository(db), { tamperDemo: false }).verify(t)).toEqual({ valid: true, record_count: records.length });
    const ids = records.map((r) => r.action_id);
    expect(await outboxOf(ids)).toHaveLength(records.length);

    // nothing published them (the process died): the sweep of any audit replica does
    const relay = new EventRelay(bus, db, createLogger('test', 'silent'));
    for (let i = 0; i < 10 && (await outboxOf(ids)).length; i++) await relay.sweep(0);
    expect(await outboxOf(ids)).toHaveLength(0);
    const seen = await publishedActionIds(ids.length);
    expect(ids.filter((id) => !seen.has(id))).toEqual([]);
  });

  it('publishes a committed batch right after the commit and deletes its outbox rows', async () => {
    const relay = new EventRelay(bus, db, createLogger('test', 'silent'));
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false, streamPrefix: prefix, onCommitted: (b) => relay.committed(b) });
    const t = randomUUID();
    const ids = (await Promise.all(Array.from({ length: 20 }, () => chain.append(t, entry(), { eventKind: 'denied' })))).map((r) => r.action_id);
    for (let i = 0; i < 50 && (await outboxOf(ids)).length; i++) {
      await new Promise((r) => setTimeout(r, 50));
      await relay.flushDeletes();
    }
    expect(await outboxOf(ids)).toHaveLength(0);
  });

  it('answers the callers of a batch before it hands the batch to onCommitted (the publish), and hands every batch', async () => {
    const order: string[] = [];
    const handed: string[] = [];
    const chain = new AuditChain(new AuditRecordRepository(db), {
      tamperDemo: false,
      streamPrefix: prefix,
      onCommitted: (b) => {
        order.push('handed');
        handed.push(...b.map((a) => a.record.action_id));
      },
    });
    const t = randomUUID();
    const lone = await chain.append(t, entry(), { eventKind: 'allowed' }).then((r) => (order.push('answered'), r));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['answered', 'handed']);
    const many = await Promise.all(Array.from({ length: 40 }, () => chain.append(t, entry(), { eventKind: 'allowed' })));
    await new Promise((r) => setImmediate(r));
    expect(handed.sort()).toEqual([lone, ...many].map((r) => r.action_id).sort());
  });
});
