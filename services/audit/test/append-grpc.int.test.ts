/**
 * The Append RPC through a real gRPC server and client against the real Postgres: with omit_entry the
 * answer carries the id, sequence number, hashes and event_queued only (the caller sent the entry); the
 * stored record is the same either way.
 */
import { randomUUID } from 'node:crypto';
import { audit as pb } from '@agw/proto';
import { type Db, createClient, createDb, createLogger, migrateToLatest, startGrpcServer, toAuditEntry } from '@agw/shared';
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
  const full = await client.append({ tenantId, entry: entry(), eventKind: '', replayJson: '' });
  expect(full.entry?.actionId).toBeTruthy();
  const e = entry();
  const brief = await client.append({ tenantId, entry: e, eventKind: '', replayJson: '', omitEntry: true });
  expect(brief.entry).toBeUndefined();
  expect(brief).toMatchObject({ tenantSeq: full.tenantSeq + 1, prevHash: full.recordHash, eventQueued: false });
  expect(brief.id).toBeGreaterThan(full.id);
  expect(brief.recordHash).toMatch(/^[0-9a-f]{64}$/);
  const [stored] = (await client.getByAction({ tenantId, actionId: e.actionId })).records;
  expect(stored).toMatchObject({ id: brief.id, tenantSeq: brief.tenantSeq, prevHash: brief.prevHash, recordHash: brief.recordHash, entry: e });
  expect(await client.verify({ tenantId })).toMatchObject({ valid: true, recordCount: 2 });
});
