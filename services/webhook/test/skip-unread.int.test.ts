/**
 * The decision consumer against the real Postgres and NATS: events of a tenant without a webhook are acked
 * before any decode or schema parse (counted as skipped, as before); events of a tenant with a webhook are
 * still parsed and turned into deliveries, and a malformed one of theirs is still dropped as malformed.
 * The decisions the gateway put under `nohook.decisions.` (a tenant without a webhook URL) are on the stream
 * but never handed to the webhook service's consumer at all.
 */
import { type Bus, type Db, Registry, type SelfSignedCert, streams, subjects } from '@agw/shared';
import { DURABLE_NAME, tenantOfDecisionSubject } from '../src/nats/decision.consumer';
import type { StartedWebhook } from './support/start-webhook';
import { capturingLogger, createTenant, decisionEvent, publishDecision, uniquePrefix } from './support/harness';
import { type WebhookBed, startWebhookBed } from './support/webhook-bed';

jest.setTimeout(60_000);

const prefix = uniquePrefix('skip');
let bed: WebhookBed;
let db: Db;
let bus: Bus;
let cert: SelfSignedCert;
let service: StartedWebhook;
const registry = new Registry();
const logger = capturingLogger();

beforeAll(async () => {
  bed = await startWebhookBed(prefix, { logger, registry });
  ({ db, bus, cert, service } = bed);
});

afterAll(async () => {
  await bed?.close();
});

const consumed = async (result: string) => (await registry.getSingleMetric('webhook_events_consumed_total')!.get()).values.find((v) => v.labels.result === result)?.value ?? 0;

async function drained(): Promise<void> {
  const jsm = await bus.nc.jetstreamManager();
  const until = Date.now() + 10_000;
  for (;;) {
    const info = await jsm.consumers.info(streams(prefix).decisions.name, DURABLE_NAME);
    if (info.num_pending === 0 && info.num_ack_pending === 0) return;
    if (Date.now() > until) throw new Error(`consumer not drained: ${info.num_pending} pending, ${info.num_ack_pending} unacked`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('the tenant of a decision subject', () => {
  expect(tenantOfDecisionSubject('', 'decisions.t1.allowed')).toBe('t1');
  expect(tenantOfDecisionSubject('P', 'P.decisions.t1.denied')).toBe('t1');
  expect(tenantOfDecisionSubject('P', 'decisions.t1.denied')).toBeNull();
  expect(tenantOfDecisionSubject('', 'decisions.t1')).toBeNull();
  expect(tenantOfDecisionSubject('', 'sessions.t1.interrupted')).toBeNull();
});

test('events of a tenant without a webhook are acked unread and counted as skipped; a webhook tenant is parsed and delivered', async () => {
  const none = await createTenant(db, { url: null, secret: null });
  const hooked = await createTenant(db, { url: 'https://127.0.0.1:9/hook', secret: 'whsec_skip_test' });
  const skippedBefore = await consumed('skipped');

  for (let i = 0; i < 20; i++) await publishDecision(bus, decisionEvent(none.id));
  // not a decision event at all: never read for a tenant without a webhook (no "malformed" log line)
  await bus.js.publish(subjects.decision(prefix, none.id, 'allowed'), new TextEncoder().encode('{"not":"an event"}'), { msgID: `bad-${none.id}` });
  const e = decisionEvent(hooked.id);
  await publishDecision(bus, e);
  await bus.js.publish(subjects.decision(prefix, hooked.id, 'allowed'), new TextEncoder().encode('{"not":"an event"}'), { msgID: `bad-${hooked.id}` });
  await drained();

  expect((await consumed('skipped')) - skippedBefore).toBe(21);
  const rows = await db.selectFrom('webhook_deliveries').select(['tenant_id', 'event_id']).where('tenant_id', 'in', [none.id, hooked.id]).execute();
  expect(rows).toEqual([{ tenant_id: hooked.id, event_id: e.event_id }]);
  const malformed = logger.lines.filter((l) => l.includes('dropping malformed event'));
  expect(malformed).toHaveLength(1);
  expect(malformed[0]).toContain(hooked.id);
});

test('decisions under nohook.decisions. are on the stream and never reach the webhook consumer', async () => {
  const none = await createTenant(db, { url: null, secret: null });
  const jsm = await bus.nc.jetstreamManager();
  const stream = streams(prefix).decisions.name;
  await drained();
  const before = await jsm.consumers.info(stream, DURABLE_NAME);
  const skippedBefore = await consumed('skipped');
  const quiet = Array.from({ length: 20 }, () => decisionEvent(none.id));
  for (const e of quiet) await bus.js.publish(subjects.decision(prefix, none.id, 'allowed', null, false), new TextEncoder().encode(JSON.stringify(e)), { msgID: e.event_id });
  const inSession = { ...decisionEvent(none.id), session_id: 'sess-1' };
  await bus.js.publish(subjects.decision(prefix, none.id, 'allowed', 'sess-1', false), new TextEncoder().encode(JSON.stringify(inSession)), { msgID: inSession.event_id });
  // one event the consumer does take afterwards: once it is acked, the consumer has passed the quiet ones
  await publishDecision(bus, decisionEvent(none.id));
  await drained();

  const after = await jsm.consumers.info(stream, DURABLE_NAME);
  expect(after.delivered.consumer_seq - before.delivered.consumer_seq).toBe(1);
  expect((await consumed('skipped')) - skippedBefore).toBe(1);
  const lastQuiet = await jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.nohook.decisions.${none.id}.allowed` });
  expect(lastQuiet.json<{ event_id: string }>().event_id).toBe(quiet[19].event_id);
  const last = await jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.nohook.decisions.${none.id}.allowed.session` });
  expect(last.json<{ event_id: string }>().event_id).toBe(inSession.event_id);
});
