/**
 * The Append RPC through a real gRPC server and client against the real Postgres: with omit_entry the
 * answer carries the id, sequence number, hashes and event_queued only (the caller sent the entry); the
 * stored record is the same either way.
 */
import { randomUUID } from 'node:crypto';
import { audit as pb } from '@agw/proto';
import { type Db, createClient, createDb, createLogger, migrateToLatest, startGrpcServer, toAuditEntry } from '@agw/shared';
import { sql } from 'kysely';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { SessionTotalsRepository } from '../src/chain/session-totals.repository';
import { auditGrpcService } from '../src/grpc/audit.grpc';
import { governedEntry } from './support/entries';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
let db: Db;
let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: ReturnType<typeof createClient<typeof pb.AuditServiceService>>;

beforeAll(async () => {
  await migrateToLatest(url);
  db = createDb(url);
  const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  server = await startGrpcServer('127.0.0.1', 0, [auditGrpcService(chain, new SessionTotalsRepository(db), createLogger('test', 'silent'))]);
  client = createClient(pb.AuditServiceClient, `127.0.0.1:${server.port}`, 'audit service');
});
afterAll(async () => {
  client.close();
  await server.close();
  await db.destroy();
});

const entry = () => toAuditEntry(governedEntry({ params: { q: 'x', nested: { list: [1, 'two', null, true] } }, details: { stage: 'policy' } }));

it('answers without the entry when asked; the record is stored and chained the same way', async () => {
  const tenantId = randomUUID();
  const full = await client.append({ tenantId, entry: entry(), eventKind: '', replayJson: '', appendKey: '' });
  expect(full.entry?.actionId).toBeTruthy();
  const e = entry();
  const brief = await client.append({ tenantId, entry: e, eventKind: '', replayJson: '', omitEntry: true, appendKey: '' });
  expect(brief.entry).toBeUndefined();
  expect(brief).toMatchObject({ tenantSeq: full.tenantSeq + 1, prevHash: full.recordHash, eventQueued: false });
  expect(brief.id).toBeGreaterThan(full.id);
  expect(brief.recordHash).toMatch(/^[0-9a-f]{64}$/);
  const [stored] = (await client.getByAction({ tenantId, actionId: e.actionId })).records;
  expect(stored).toMatchObject({ id: brief.id, tenantSeq: brief.tenantSeq, prevHash: brief.prevHash, recordHash: brief.recordHash, entry: e });
  expect(await client.verify({ tenantId })).toMatchObject({ valid: true, recordCount: 2 });
});

describe('idempotent appends (append_key)', () => {
  const outboxRows = async (actionId: string) =>
    Number((await db.selectFrom('event_outbox').select((eb) => eb.fn.countAll().as('n')).where(sql`event->>'action_id'`, '=', actionId).executeTakeFirstOrThrow()).n);

  it('answers an append sent again under the same key with the first record, over the stream too', async () => {
    const tenantId = randomUUID();
    const e = entry();
    const req = { tenantId, entry: e, eventKind: 'allowed', replayJson: '', omitEntry: true, appendKey: randomUUID() };
    const first = await client.appendStream(req);
    expect(first.eventQueued).toBe(true);
    const again = await client.appendStream(req);
    const unary = await client.append(req);
    expect(again).toEqual(first);
    expect(unary).toEqual(first);
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
    const answers = await Promise.all(Array.from({ length: 12 }, () => client.appendStream({ tenantId, entry: e, eventKind: '', replayJson: '', omitEntry: true, appendKey: key })));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    const other = await client.appendStream({ tenantId, entry: e, eventKind: '', replayJson: '', omitEntry: true, appendKey: randomUUID() });
    expect(other.id).not.toBe(answers[0].id);
    expect(other.prevHash).toBe(answers[0].recordHash);
    expect(await client.verify({ tenantId })).toMatchObject({ valid: true, recordCount: 2 });
  });

  it('keys are per tenant, and a malformed key is a 422-style input error', async () => {
    const key = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const ra = await client.appendStream({ tenantId: a, entry: entry(), eventKind: '', replayJson: '', omitEntry: true, appendKey: key });
    const rb = await client.appendStream({ tenantId: b, entry: entry(), eventKind: '', replayJson: '', omitEntry: true, appendKey: key });
    expect(ra.id).not.toBe(rb.id);
    const bad = await client.appendStream({ tenantId: a, entry: entry(), eventKind: '', replayJson: '', omitEntry: true, appendKey: 'has space' }).catch((err: { code?: string }) => err);
    expect(bad).toMatchObject({ code: 'invalid_input' });
  });
});
