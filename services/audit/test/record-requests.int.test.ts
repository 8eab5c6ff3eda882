/**
 * Records sent on the AUDIT stream (the vault's control_plane records: packages/shared/src/bus/record-requests.ts)
 * are appended by the audit service's durable consumer: one record per request however often it is sent,
 * none lost while the audit service is down (the request waits in the stream), and a request that can never
 * be appended is dropped without holding up the ones after it. The service's own definition against the
 * real Postgres and NATS.
 */
import { randomUUID } from 'node:crypto';
import { audit as pb } from '@agw/proto';
import { type Bus, type RecordRequestEvent, TEST_DATABASE_URL, migrateToLatest, openTestBus, publishEvent, recordRequestSubject, streamedRecordAppender, toAuditEntry } from '@agw/shared';
import { governedEntry } from './support/entries';
import { type StartedAudit, startAudit } from './support/start-audit';
const PREFIX = `${process.env.AGW_STREAM_PREFIX ?? 'TEST'}_RR`;
let bus: Bus;
let audit: StartedAudit;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const request = (tenantId: string) => {
  const entry = toAuditEntry(governedEntry({ params: {}, details: { event: 'tool.quarantined' } }));
  return { tenant_id: tenantId, entry, event_kind: 'quarantined', append_key: `quarantine:${entry.action_id}` };
};

/** the tenant's records with `actionId`, once there are `n` (or what there is after 15 s) */
async function recordsOf(tenantId: string, actionId: string, n = 1) {
  let records: Awaited<ReturnType<StartedAudit['client']['getByAction']>>['records'] = [];
  for (const until = Date.now() + 15_000; Date.now() < until; await sleep(100)) {
    records = (await audit.client.getByAction({ tenant_id: tenantId, action_id: actionId })).records;
    if (records.length >= n) break;
  }
  return records;
}

beforeAll(async () => {
  await migrateToLatest(TEST_DATABASE_URL);
  bus = await openTestBus(PREFIX, 'record-requests-test');
  audit = await startAudit({ prefix: PREFIX, env: { DATABASE_URL: TEST_DATABASE_URL } });
});
afterAll(async () => {
  await audit.close();
  await bus.close();
});

it('appends a streamed request once, however often it is sent, with its decision event kind', async () => {
  const tenantId = randomUUID();
  const req = request(tenantId);
  const appender = streamedRecordAppender(bus);
  await appender.append(req);
  await appender.append(req); // sent again (a retried publish): the stream drops it, the append key would too
  const records = await recordsOf(tenantId, req.entry.action_id);
  expect(records).toHaveLength(1);
  expect(records[0].entry).toMatchObject({ action_id: req.entry.action_id, tool: req.entry.tool, decision: req.entry.decision });
  await sleep(500);
  expect((await audit.client.getByAction({ tenant_id: tenantId, action_id: req.entry.action_id })).records).toHaveLength(1);
  expect(await audit.client.verify({ tenant_id: tenantId })).toMatchObject({ valid: true, record_count: 1 });
});

it('loses nothing while the audit service is down: the request waits in the stream and is appended when it is back', async () => {
  const tenantId = randomUUID();
  await audit.close();
  const req = request(tenantId);
  await streamedRecordAppender(bus).append(req); // stored by the stream: nobody is reading
  audit = await startAudit({ prefix: PREFIX, env: { DATABASE_URL: TEST_DATABASE_URL } });
  expect(await recordsOf(tenantId, req.entry.action_id)).toHaveLength(1);
});

it("drops a request that can never be appended (another tenant's subject, no key) and goes on with the next", async () => {
  const [a, b] = [randomUUID(), randomUUID()];
  const wrong = request(a);
  // a's request on b's subject: a service may only ask for the tenant it names
  const event: RecordRequestEvent = { event_id: wrong.append_key, request: pb.AppendRequest.toJSON(wrong) as Record<string, unknown> };
  await publishEvent(bus, recordRequestSubject(PREFIX, b), event);
  const right = request(b);
  await streamedRecordAppender(bus).append(right);
  expect(await recordsOf(b, right.entry.action_id)).toHaveLength(1);
  expect((await audit.client.getByAction({ tenant_id: a, action_id: wrong.entry.action_id })).records).toEqual([]);
  expect((await audit.client.getByAction({ tenant_id: b, action_id: wrong.entry.action_id })).records).toEqual([]);
});
