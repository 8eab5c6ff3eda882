/**
 * The SIEM export against the real Postgres, NATS and an HTTPS collector on loopback: decision events of a
 * tenant with `siem_export` reach its collector as OCSF API Activity events that validate against the
 * vendored OCSF 1.8.0 schema, batched per tenant, signed like the webhooks, also for a tenant without a
 * webhook URL (its events are under `nohook.decisions.`); a tenant without the export gets nothing; a
 * collector that fails gets the events again (every event at least once); Splunk HEC bodies carry the
 * collector's token.
 */
import { randomUUID } from 'node:crypto';
import { OCSF_PROFILES, OcsfSchema } from '@agw/ocsf';
import { type Bus, Counter, type Db, type DecisionEvent, Registry, type SelfSignedCert, publishEvent, subjects } from '@agw/shared';
import Ajv from 'ajv';
import { verifySignature } from '../src/delivery/webhook.signer';
import { tenantOfAnyDecisionSubject } from '../src/nats/siem.consumer';
import { SiemExport, siemBody } from '../src/siem/siem-export';
import { HttpsSender } from '../src/target/https-sender';
import { TargetGuard } from '../src/target/target-guard';
import type { StartedWebhook } from './support/start-webhook';
import { capturingLogger, decisionEvent, uniquePrefix } from './support/harness';
import { type WebhookBed, startWebhookBed } from './support/webhook-bed';
import { type Receiver, startReceiver } from './support/https-receiver';

jest.setTimeout(60_000);

const prefix = uniquePrefix('siem');
let bed: WebhookBed;
let db: Db;
let bus: Bus;
let cert: SelfSignedCert;
let caFile: string;
let receiver: Receiver;
let service: StartedWebhook;
const registry = new Registry();
const logger = capturingLogger();
const validate = new Ajv({ allErrors: true, strict: false }).compile(new OcsfSchema().eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]));
let failNext = 0;

async function tenantWith(settings: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  await db.insertInto('tenants').values({ id, slug: `siem-${id}`, name: 'SIEM test' }).execute();
  await db.insertInto('tenant_settings').values({ tenant_id: id, settings: JSON.stringify(settings) }).execute();
  return id;
}

/** As the audit service publishes it: under `nohook.` when the tenant has no webhook URL. */
const publish = (e: DecisionEvent, webhook: boolean) => publishEvent(bus, subjects.decision(bus.prefix, e.tenant_id, e.kind, e.session_id, webhook), e);

const eventsOf = (r: Receiver, tenantId: string) =>
  r.requests
    .filter((q) => q.answered === 200)
    .flatMap((q) => q.rawBody.toString('utf8').trim().split('\n'))
    .map((l) => JSON.parse(l))
    .filter((e) => e.metadata.tenant_uid === tenantId);

beforeAll(async () => {
  bed = await startWebhookBed(prefix, { env: { SIEM_LINGER_MS: '200', SIEM_MAX_RETRY_DELAY_MS: '1000' }, logger, registry });
  ({ db, bus, cert, caFile, service } = bed);
  receiver = await startReceiver(cert, () => (failNext-- > 0 ? 503 : 200));
});

afterAll(async () => {
  await bed?.close();
  await receiver?.close();
});

test('the tenant of a subject under either root', () => {
  expect(tenantOfAnyDecisionSubject('P', 'P.decisions.t1.allowed')).toBe('t1');
  expect(tenantOfAnyDecisionSubject('P', 'P.nohook.decisions.t2.denied.session')).toBe('t2');
  expect(tenantOfAnyDecisionSubject('P', 'P.sessions.t1.interrupted')).toBeNull();
});

test('a tenant with the export gets every decision as a schema-valid OCSF event, batched and signed; a tenant without it gets nothing', async () => {
  const secret = 'whsec_siem_export_test_secret';
  const exporting = await tenantWith({ webhook_url: 'https://127.0.0.1:9/hook', webhook_secret: secret, siem_export: { url: receiver.url('/siem'), format: 'jsonl' } });
  // no webhook URL: its events are under nohook., still exported
  const nohook = await tenantWith({ siem_export: { url: receiver.url('/siem-nohook'), format: 'jsonl' } });
  const silent = await tenantWith({ webhook_url: null });
  const sent: DecisionEvent[] = [];
  for (let i = 0; i < 30; i++) {
    const e = decisionEvent(exporting, { record_id: i + 1, decision: i % 3 === 0 ? 'deny' : 'allow', kind: i % 3 === 0 ? 'denied' : 'allowed', violations: i % 3 === 0 ? ['blocked_tool'] : [] });
    sent.push(e);
    await publish(e, true);
  }
  for (let i = 0; i < 5; i++) await publish(decisionEvent(nohook, { record_id: i + 1 }), false);
  for (let i = 0; i < 5; i++) await publish(decisionEvent(silent, { record_id: i + 1 }), false);

  await waitUntil(() => eventsOf(receiver, exporting).length >= 30 && eventsOf(receiver, nohook).length >= 5);
  const got = eventsOf(receiver, exporting);
  for (const e of got) expect([validate(e), validate.errors]).toEqual([true, null]);
  expect(new Set(got.map((e) => e.metadata.sequence))).toEqual(new Set(sent.map((e) => e.record_id)));
  expect(got.filter((e) => e.disposition_id === 2)).toHaveLength(10);
  // batched: far fewer requests than events; each signed with the tenant's webhook secret over the raw body
  const requests = receiver.requests.filter((q) => q.path === '/siem');
  expect(requests.length).toBeLessThan(30);
  for (const q of requests) {
    expect(q.headers['content-type']).toBe('application/x-ndjson');
    expect(verifySignature(secret, q.rawBody, q.headers['x-service-signature'] as string)).toBe(true);
  }
  // no webhook secret, no signature
  expect(receiver.requests.filter((q) => q.path === '/siem-nohook').every((q) => q.headers['x-service-signature'] === undefined)).toBe(true);
  await new Promise((r) => setTimeout(r, 500));
  expect(eventsOf(receiver, silent)).toHaveLength(0);
});

test('a collector that fails gets the events again: every event at least once', async () => {
  const t = await tenantWith({ siem_export: { url: receiver.url('/siem-flaky'), format: 'jsonl' } });
  failNext = 2;
  for (let i = 0; i < 12; i++) await publish(decisionEvent(t, { record_id: i + 1 }), false);
  await waitUntil(() => new Set(eventsOf(receiver, t).map((e) => e.metadata.sequence)).size === 12, 20_000);
  expect(receiver.requests.filter((q) => q.path === '/siem-flaky' && q.answered === 503).length).toBeGreaterThanOrEqual(1);
  const failed = (await registry.getSingleMetric('siem_export_events_total')!.get()).values.find((v) => v.labels.outcome === 'http_error')?.value ?? 0;
  expect(failed).toBeGreaterThan(0);
});

test('Splunk HEC: one HEC event per decision, the OCSF event inside, the token in Authorization', async () => {
  const t = await tenantWith({});
  const events = [decisionEvent(t, { record_id: 1 }), decisionEvent(t, { record_id: 2 })];
  const { body, contentType } = siemBody('splunk_hec', t, events);
  expect(contentType).toBe('application/json');
  const lines = body.trim().split('\n').map((l) => JSON.parse(l));
  expect(lines.map((l) => [l.sourcetype, l.source, l.event.metadata.sequence])).toEqual([
    ['ocsf:api_activity', `agw:${t}`, 1],
    ['ocsf:api_activity', `agw:${t}`, 2],
  ]);
  for (const l of lines) expect(validate(l.event)).toBe(true);
  expect(lines[0].time).toBe(Date.parse(events[0].requested_at) / 1000);

  // the real sender to the real collector, the token opened by the given function (the vault in the service)
  const siem = new SiemExport({
    tenants: { cached: async () => ({ url: null, secret: null, sealedSecret: null, events: undefined, siem: { url: receiver.url('/hec'), format: 'splunk_hec', sealedToken: 'sealed-token' } }) },
    sender: new HttpsSender({ guard: new TargetGuard(['127.0.0.0/8']), timeoutMs: 5000, connectTimeoutMs: 2000, caFile }),
    webhookSecret: async () => null,
    siemToken: async (_tenant, sealed) => (sealed === 'sealed-token' ? 'hec-token-123' : ''),
    events: new Counter({ name: 'siem_test_events_total', help: 'test', labelNames: ['outcome'], registers: [] }),
    logger,
  });
  expect(await siem.handleBatch(events.map((event) => ({ event, subject: 'x', deliveries: 1 })))).toEqual([true, true]);
  const hec = receiver.requests.filter((q) => q.path === '/hec');
  expect(hec).toHaveLength(1);
  expect(hec[0].headers.authorization).toBe('Splunk hec-token-123');
  // the token never reaches a log line
  expect(logger.lines.join('\n')).not.toContain('hec-token-123');
});

async function waitUntil(cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
