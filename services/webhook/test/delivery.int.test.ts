/**
 * Webhook delivery against the real Postgres, the real NATS JetStream and a real local HTTPS receiver
 * (self-signed certificate trusted through WEBHOOK_CA_FILE). Retry delays are the spec's real ones.
 */
import { randomUUID } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { webhook as pb } from '@agw/proto';
import { type Bus, type Db, Registry, type SelfSignedCert, createClient, publishEvent, subjects } from '@agw/shared';
import { DeliveryRepository } from '../src/delivery/delivery.repository';
import { DeliveryRetention } from '../src/delivery/delivery-retention';
import { verifySignature } from '../src/delivery/webhook.signer';
import { TargetGuard } from '../src/target/target-guard';
import { HttpsSender } from '../src/target/https-sender';
import type { StartedWebhook } from './support/start-webhook';
import { capturingLogger, createTenant, decisionEvent, publishDecision, uniquePrefix, writeCaFile } from './support/harness';
import { type WebhookBed, startWebhookBed } from './support/webhook-bed';
import { type Receiver, startReceiver } from './support/https-receiver';

jest.setTimeout(60_000);

const prefix = uniquePrefix('delivery');
const logs = capturingLogger();
let bed: WebhookBed;
let db: Db;
let bus: Bus;
let cert: SelfSignedCert;
let caFile: string;
let service: StartedWebhook;
const registry = new Registry();
const receivers: Receiver[] = [];

/**
 * The guard's DNS for these tests. hook.test answers 127.0.0.1 once and then rebinds to a private address:
 * only a sender that connects to the address it checked (pinning) reaches the receiver.
 */
const lookups: string[] = [];
const lookup = async (host: string) => {
  lookups.push(host);
  if (host === 'hook.test') return [{ address: lookups.filter((h) => h === 'hook.test').length === 1 ? '127.0.0.1' : '10.66.0.1', family: 4 }];
  if (host === 'internal.test') return [{ address: '10.9.8.7', family: 4 }];
  return [];
};

async function receiver(respond?: Parameters<typeof startReceiver>[1]): Promise<Receiver> {
  const r = await startReceiver(cert, respond);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  bed = await startWebhookBed(prefix, { env: { WEBHOOK_TIMEOUT_MS: '3000' }, logger: logs, registry, lookup });
  ({ db, bus, cert, caFile, service } = bed);
});

afterAll(async () => {
  await bed?.close();
  for (const r of receivers) await r.close();
});

/** Wait until the delivery of `actionId` reached a final status in the tenant's log. */
async function finalDelivery(tenantId: string, actionId: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const [d] = await service.api.deliveries.list(tenantId, { limit: 10, actionId });
    if (d && d.status !== 'pending') return d;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`delivery of ${actionId} not final in ${timeoutMs} ms`);
}

describe('signed delivery of decision events', () => {
  it('posts the spec payload signed with X-Service-Signature; the receiver verifies it in constant time', async () => {
    const rx = await receiver();
    const t = await createTenant(db, { url: rx.url() });
    const e = decisionEvent(t.id, { kind: 'denied', decision: 'deny', violations: ['blocked_domain'], severity: 'high' });
    await publishDecision(bus, e);
    const [req] = await rx.waitFor(1);
    expect(req.path).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature(t.secret, req.rawBody, req.headers['x-service-signature'] as string)).toBe(true);
    expect(verifySignature('whsec_not-the-secret-at-all', req.rawBody, req.headers['x-service-signature'] as string)).toBe(false);
    expect(req.json).toEqual({
      event: 'action.denied',
      timestamp: e.requested_at,
      data: {
        action_id: e.action_id,
        agent_id: 'agent-1',
        tool: 'svc_web_search',
        method: 'search',
        decision: 'deny',
        violations: ['blocked_domain'],
        severity: 'high',
        requires_human: false,
      },
    });
    const d = await finalDelivery(t.id, e.action_id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, event: 'action.denied', last_status_code: 200 });
    expect(req.headers['x-service-delivery']).toBe(d.delivery_id);
    expect(d.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'success' })]);
  });

  it('delivers only subscribed events; action.pending reaches a tenant subscribed to the alias action.pending_approval', async () => {
    const rx = await receiver();
    const t = await createTenant(db, { url: rx.url(), events: ['action.pending_approval'] });
    const allowed = decisionEvent(t.id, { kind: 'allowed' });
    const observed = decisionEvent(t.id, { kind: 'observed', decision: 'observed' });
    const pending = decisionEvent(t.id, { kind: 'pending', decision: 'requires_human', requires_human: true });
    for (const e of [allowed, observed, pending]) await publishDecision(bus, e);
    const [req] = await rx.waitFor(1);
    expect(req.json).toMatchObject({ event: 'action.pending_approval', data: { action_id: pending.action_id, requires_human: true } });
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.requests).toHaveLength(1);
    expect(await service.api.deliveries.list(t.id, { limit: 10 })).toHaveLength(1);
  });

  it('an interrupted managed session reaches tenants subscribed to session.interrupted', async () => {
    const rx = await receiver();
    const t = await createTenant(db, { url: rx.url(), events: ['session.interrupted'] });
    const other = await createTenant(db, { url: rx.url() });
    const event = (tenantId: string) => ({
      event_id: randomUUID(),
      kind: 'interrupted',
      tenant_id: tenantId,
      session_id: `sess-${randomUUID()}`,
      agent_id: 'agent-7',
      data: { audit_action_id: randomUUID(), reason: 'operator stop' },
      occurred_at: new Date().toISOString(),
    });
    const e = event(t.id);
    await publishEvent(bus, subjects.session(prefix, t.id, 'interrupted'), e);
    await publishEvent(bus, subjects.session(prefix, other.id, 'interrupted'), event(other.id)); // not subscribed (defaults)
    const completed = { ...event(t.id), kind: 'completed' };
    await publishEvent(bus, subjects.session(prefix, t.id, 'completed'), completed); // not a webhook event
    const [req] = await rx.waitFor(1);
    expect(req.json).toEqual({
      event: 'session.interrupted',
      timestamp: e.occurred_at,
      data: { session_id: e.session_id, agent_id: 'agent-7', action_id: e.data.audit_action_id, reason: 'operator stop' },
    });
    expect(verifySignature(t.secret, req.rawBody, req.headers['x-service-signature'] as string)).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.requests).toHaveLength(1);
  });

  it('a redelivered event (same event id) is delivered once', async () => {
    const rx = await receiver();
    const t = await createTenant(db, { url: rx.url() });
    const e = decisionEvent(t.id);
    expect(await service.api.deliveries.enqueueDecision(e)).toBe('enqueued');
    expect(await service.api.deliveries.enqueueDecision(e)).toBe('duplicate');
    await rx.waitFor(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.requests).toHaveLength(1);
  });

  it('a tenant never sees another tenant’s deliveries', async () => {
    const rx = await receiver();
    const a = await createTenant(db, { url: rx.url() });
    const b = await createTenant(db, { url: rx.url() });
    const e = decisionEvent(a.id);
    await publishDecision(bus, e);
    const d = await finalDelivery(a.id, e.action_id);
    expect(await service.api.deliveries.list(b.id, { limit: 100 })).toEqual([]);
    await expect(service.api.deliveries.get(b.id, d.delivery_id)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.api.deliveries.get(a.id, d.delivery_id)).resolves.toMatchObject({ delivery_id: d.delivery_id });
  });
});

describe('retries at the spec delays (0, 2, 4, 8 s)', () => {
  it('a receiver that fails three times and then succeeds gets the event on the fourth attempt', async () => {
    const rx = await receiver((n) => (n <= 3 ? 503 : 200));
    const t = await createTenant(db, { url: rx.url() });
    const e = decisionEvent(t.id);
    await publishDecision(bus, e);
    const reqs = await rx.waitFor(4, 30_000);
    const gaps = reqs.slice(1).map((r, i) => (r.at - reqs[i].at) / 1000);
    expect(gaps[0]).toBeGreaterThanOrEqual(1.8);
    expect(gaps[0]).toBeLessThan(3.5);
    expect(gaps[1]).toBeGreaterThanOrEqual(3.8);
    expect(gaps[1]).toBeLessThan(5.5);
    expect(gaps[2]).toBeGreaterThanOrEqual(7.8);
    expect(gaps[2]).toBeLessThan(9.5);
    // the same signed bytes each time
    expect(new Set(reqs.map((r) => r.rawBody.toString())).size).toBe(1);
    expect(reqs.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4']);
    for (const r of reqs) expect(verifySignature(t.secret, r.rawBody, r.headers['x-service-signature'] as string)).toBe(true);
    const d = await finalDelivery(t.id, e.action_id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 200 });
    expect(d.attempt_log.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
      [1, 503, 'http_error'],
      [2, 503, 'http_error'],
      [3, 503, 'http_error'],
      [4, 200, 'success'],
    ]);
  });

  it('a receiver that always fails ends as failed after four attempts', async () => {
    const rx = await receiver(() => 500);
    const t = await createTenant(db, { url: rx.url() });
    const e = decisionEvent(t.id);
    await publishDecision(bus, e);
    const reqs = await rx.waitFor(4, 30_000);
    const gaps = reqs.slice(1).map((r, i) => (r.at - reqs[i].at) / 1000);
    expect(gaps.map((g) => Math.round(g))).toEqual([2, 4, 8]);
    const d = await finalDelivery(t.id, e.action_id);
    expect(d).toMatchObject({ status: 'failed', attempts: 4, last_status_code: 500, next_attempt_at: null });
    expect(d.completed_at).not.toBeNull();
    expect(d.attempt_log).toHaveLength(4);
    await new Promise((r) => setTimeout(r, 2500));
    expect(rx.requests).toHaveLength(4);
  });
});

describe('target guard', () => {
  it('refuses a private address without connecting, and logs the refusal as an attempt', async () => {
    const t = await createTenant(db, { url: 'https://10.1.2.3/hook' });
    const d = await service.api.deliveries.test(t.id);
    expect(d.attempt_log[0]).toMatchObject({ attempt: 1, outcome: 'refused', status_code: null });
    expect(d.attempt_log[0].error).toMatch(/10\.1\.2\.3 is private/);
    expect(d.attempt_log[0].duration_ms).toBeLessThan(500);
  });

  it('refuses a host name that resolves to a private address, and pins the checked address for a good one', async () => {
    const bad = await createTenant(db, { url: 'https://internal.test/hook' });
    const refused = await service.api.deliveries.test(bad.id);
    expect(refused.attempt_log[0]).toMatchObject({ outcome: 'refused' });
    expect(refused.attempt_log[0].error).toMatch(/internal\.test refused: address 10\.9\.8\.7 is private/);

    const rx = await receiver();
    const good = await createTenant(db, { url: `https://hook.test:${rx.port}/named` });
    const ok = await service.api.deliveries.test(good.id);
    expect(ok.attempt_log[0].error).toBeNull();
    expect(ok).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(rx.requests[0].headers.host).toBe(`hook.test:${rx.port}`);
    expect(rx.requests[0].path).toBe('/named');
    // resolved once, by the guard; the connection never asked DNS again (a second answer would be private)
    expect(lookups.filter((h) => h === 'hook.test')).toHaveLength(1);
    const rebound = await service.api.deliveries.test(good.id);
    expect(rebound.attempt_log[0]).toMatchObject({ outcome: 'refused', error: expect.stringMatching(/10\.66\.0\.1 is private/) });
    expect(rx.requests).toHaveLength(1);
  });

  it('refuses loopback unless configured, http:// targets, and untrusted certificates', async () => {
    const rx = await receiver();
    const strict = new HttpsSender({ guard: new TargetGuard([]), timeoutMs: 2000, connectTimeoutMs: 1000, caFile });
    const body = '{}';
    expect(await strict.send({ url: rx.url(), body, headers: {} })).toMatchObject({ outcome: 'refused', error: expect.stringMatching(/loopback/) });
    const open = new HttpsSender({ guard: new TargetGuard(['127.0.0.0/8']), timeoutMs: 2000, connectTimeoutMs: 1000, caFile });
    expect(await open.send({ url: `http://127.0.0.1:${rx.port}/hook`, body, headers: {} })).toMatchObject({ outcome: 'refused' });
    const untrusting = new HttpsSender({ guard: new TargetGuard(['127.0.0.0/8']), timeoutMs: 2000, connectTimeoutMs: 1000 });
    expect(await untrusting.send({ url: rx.url(), body, headers: {} })).toMatchObject({ outcome: 'tls_error' });
    expect(await open.send({ url: rx.url(), body, headers: {} })).toMatchObject({ outcome: 'success', statusCode: 200 });
    expect(rx.requests).toHaveLength(1);
  });

  it('does not follow redirects and bounds a receiver that never answers', async () => {
    const redirecting = await receiver(() => 302);
    const hanging = await receiver(() => 'hang');
    const sender = new HttpsSender({ guard: new TargetGuard(['127.0.0.0/8']), timeoutMs: 1000, connectTimeoutMs: 500, caFile });
    expect(await sender.send({ url: redirecting.url(), body: '{}', headers: {} })).toMatchObject({ outcome: 'http_error', statusCode: 302 });
    const t0 = Date.now();
    const r = await sender.send({ url: hanging.url(), body: '{}', headers: {} });
    expect(r).toMatchObject({ outcome: 'timeout', statusCode: null });
    expect(Date.now() - t0).toBeLessThan(2000);

    // a peer that accepts TCP but never completes the TLS handshake is cut at the connect budget
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const t1 = Date.now();
      const s = await sender.send({ url: `https://127.0.0.1:${(silent.address() as AddressInfo).port}/`, body: '{}', headers: {} });
      expect(s).toMatchObject({ outcome: 'timeout', error: expect.stringMatching(/no TLS connection within 500 ms/) });
      expect(Date.now() - t1).toBeLessThan(900);
    } finally {
      silent.close();
    }
  });
});

describe('test delivery', () => {
  it('sends a signed sample event at once and records it in the log', async () => {
    const rx = await receiver();
    const t = await createTenant(db, { url: rx.url(), events: ['action.denied'] });
    const d = await service.api.deliveries.test(t.id);
    expect(d).toMatchObject({ status: 'delivered', event: 'webhook.test', test: true, attempts: 1 });
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0].json).toMatchObject({ event: 'webhook.test', data: { agent_id: 'webhook-test' } });
    expect(verifySignature(t.secret, rx.requests[0].rawBody, rx.requests[0].headers['x-service-signature'] as string)).toBe(true);
    expect((await service.api.deliveries.list(t.id, { limit: 5 })).map((x) => x.delivery_id)).toEqual([d.delivery_id]);
  });

  it('without a webhook URL is a conflict, and an unknown event is invalid input', async () => {
    const t = await createTenant(db, { url: null });
    await expect(service.api.deliveries.test(t.id)).rejects.toMatchObject({ code: 'conflict' });
    const u = await createTenant(db, { url: 'https://example.invalid/' });
    await expect(service.api.deliveries.test(u.id, 'action.exploded')).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(service.api.deliveries.list(u.id, { limit: 5, status: 'weird' as never })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(service.api.deliveries.get(u.id, 'not-a-uuid')).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.api.deliveries.get(u.id, randomUUID())).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('gRPC adapter', () => {
  it('serves the delivery log and test delivery, maps errors to the taxonomy, and pre-checks targets', async () => {
    const client = createClient(pb.WebhookServiceClient, `127.0.0.1:${service.grpcPort}`, 'webhook service');
    try {
      const rx = await receiver();
      const t = await createTenant(db, { url: rx.url() });
      const sent = await client.testDelivery({ tenant_id: t.id, event: 'action.allowed' });
      expect(sent).toMatchObject({ event: 'action.allowed', status: 'delivered', attempts: 1, test: true, last_status_code: 200 });
      expect(sent.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'success' })]);
      const { deliveries } = await client.listDeliveries({ tenant_id: t.id, limit: 10, status: '', action_id: '', event: '' });
      expect(deliveries.map((d) => d.delivery_id)).toEqual([sent.delivery_id]);
      expect(await client.getDelivery({ tenant_id: t.id, delivery_id: sent.delivery_id })).toMatchObject({ delivery_id: sent.delivery_id });
      await expect(client.getDelivery({ tenant_id: randomUUID(), delivery_id: sent.delivery_id })).rejects.toMatchObject({ code: 'not_found' });
      await expect(client.listDeliveries({ tenant_id: t.id, limit: 10, status: 'odd', action_id: '', event: '' })).rejects.toMatchObject({ code: 'invalid_input' });

      await expect(client.checkTarget({ url: rx.url() })).resolves.toEqual({});
      for (const [url, reason] of [
        ['https://10.1.2.3/hook', /10\.1\.2\.3 is private/],
        ['https://internal.test/hook', /10\.9\.8\.7 is private/],
        ['https://169.254.169.254/latest/meta-data', /link-local/],
        ['http://hooks.example.com/', /HTTPS/],
      ] as const) {
        const err = await client.checkTarget({ url }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: 'invalid_input', detail: [{ loc: ['webhook_url'], msg: expect.stringMatching(reason) }] });
      }
    } finally {
      client.close();
    }
  });
});

describe('fleets sharing a database', () => {
  it('a webhook service only attempts the deliveries its own fleet (stream prefix) accepted', async () => {
    const rx = await receiver();
    const t = await createTenant(db, { url: rx.url() });
    const foreign = new DeliveryRepository(db, `${prefix}_OTHER`);
    const id = randomUUID();
    await foreign.insert(t.id, { id, eventId: `foreign:${id}`, event: 'action.allowed', actionId: null, url: rx.url(), body: '{}', isTest: false, dueInMs: 0 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.requests).toHaveLength(0);
    expect(await service.api.deliveries.get(t.id, id)).toMatchObject({ status: 'pending', attempts: 0 });
    await db.deleteFrom('webhook_deliveries').where('id', '=', id).execute();
  });
});

describe('log retention and metrics', () => {
  it('purges final deliveries older than the retention, never pending ones', async () => {
    const repo = new DeliveryRepository(db, prefix);
    const t = await createTenant(db, { url: 'https://example.invalid/' });
    const ids = { oldDelivered: randomUUID(), oldPending: randomUUID(), recentFailed: randomUUID() };
    for (const [name, id] of Object.entries(ids)) {
      await repo.insert(t.id, { id, eventId: `retention:${id}`, event: 'action.allowed', actionId: null, url: 'https://example.invalid/', body: '{}', isTest: false, dueInMs: 3_600_000 });
      if (name !== 'oldPending') await repo.recordAttempt(t.id, id, { attempt: 1, startedAt: new Date(), durationMs: 1, statusCode: 200, outcome: 'success', error: null }, { status: name === 'oldDelivered' ? 'delivered' : 'failed' });
    }
    const longAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000);
    await db.updateTable('webhook_deliveries').set({ completed_at: longAgo, created_at: longAgo }).where('id', 'in', [ids.oldDelivered, ids.oldPending]).execute();
    expect(await new DeliveryRetention(repo, 30, logs).runOnce()).toBeGreaterThanOrEqual(1);
    const left = (await db.selectFrom('webhook_deliveries').select('id').where('tenant_id', '=', t.id).execute()).map((r) => r.id).sort();
    expect(left).toEqual([ids.oldPending, ids.recentFailed].sort());
    expect(await db.selectFrom('webhook_attempts').select('attempt').where('delivery_id', '=', ids.oldDelivered).execute()).toEqual([]);
  });

  it('exposes attempts, outcomes and the pending backlog as Prometheus metrics', async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/webhook_attempts_total\{outcome="success"\} \d+/);
    expect(text).toMatch(/webhook_attempts_total\{outcome="http_error"\} \d+/);
    expect(text).toMatch(/webhook_deliveries_completed_total\{status="failed"\} \d+/);
    expect(text).toMatch(/webhook_events_consumed_total\{result="enqueued"\} \d+/);
    expect(text).toMatch(/webhook_deliveries_pending \d+/);
  });
});

describe('logs', () => {
  it('never contain a webhook secret or a payload', async () => {
    const tenants = await db.selectFrom('tenant_settings').select('settings').execute();
    const secrets = tenants.map((r) => (r.settings as { webhook_secret?: string }).webhook_secret).filter((s): s is string => !!s && s.startsWith('whsec_'));
    expect(logs.lines.length).toBeGreaterThan(5);
    const all = logs.lines.join('\n');
    for (const s of secrets) expect(all).not.toContain(s);
    expect(all).not.toContain('"violations"');
  });
});
