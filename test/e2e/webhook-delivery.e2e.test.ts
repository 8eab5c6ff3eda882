/**
 * E2E: webhooks through the public API only. A real HTTPS receiver runs in this process with a
 * self-signed certificate made for this run; the e2e webhook service trusts it through WEBHOOK_CA_FILE
 * (support/e2e-env.ts) and is allowed to reach loopback through WEBHOOK_ALLOW_CIDRS.
 * Retry delays are the spec's real ones (0, 2, 4, 8 s).
 */
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Tenant, api, call, eventually, fleet, newTenant, sleep } from './support/api';
import { connect } from 'nats';
import { E2E_DATABASE_URL, E2E_STREAM_PREFIX } from './support/e2e-env';
import { tablesContaining } from './support/stores';
import { trustedReceiverCert } from './support/webhook-receiver-cert';

jest.setTimeout(120_000);

interface Received {
  at: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  json: any;
}

let cert: { cert: string; key: string };
const servers: https.Server[] = [];

/** The receiver check from docs/webhooks.md: HMAC-SHA256 of the raw body, compared in constant time. */
function verify(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function receiver(status: (n: number) => number | 'hang' = () => 200) {
  const got: Received[] = [];
  const server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      got.push({ at, headers: req.headers, raw, json: JSON.parse(raw.toString()) });
      const s = status(got.length);
      if (s === 'hang') return;
      res.writeHead(s).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/hooks/agw`,
    got,
    forAction: (id: string) => got.filter((g) => g.json.data?.action_id === id),
  };
}

/**
 * Tenants are few and reused (signups are rate limited per client address): each test points the tenant's
 * webhook at its own receiver and looks deliveries up by action id.
 */
const tenants = new Map<string, Tenant & { secret?: string }>();
async function tenant(name: string): Promise<Tenant & { secret?: string }> {
  if (!tenants.has(name)) tenants.set(name, await newTenant(`Webhooks ${name}`));
  return tenants.get(name)!;
}

async function withWebhook(url: string, extra: Record<string, unknown> = {}, name = 'main'): Promise<Tenant & { secret: string }> {
  const t = await tenant(name);
  const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: url, webhook_events: ['action.allowed', 'action.denied', 'action.pending'], ...extra } });
  expect(r.status).toBe(200);
  expect(r.body.webhook_secret).toMatch(/^whsec_/);
  t.secret = r.body.webhook_secret;
  return t as Tenant & { secret: string };
}

async function deliveryOf(key: string, actionId: string, final = true) {
  return eventually(
    async () => {
      const r = await api('GET', `/webhooks/deliveries?action_id=${actionId}`, { key });
      expect(r.status).toBe(200);
      const d = r.body.deliveries[0];
      return d && (!final || d.status !== 'pending') ? d : undefined;
    },
    40_000,
  );
}

beforeAll(() => {
  cert = trustedReceiverCert();
});

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('webhook settings', () => {
  test('an http:// webhook_url is refused with a 422', async () => {
    const t = await tenant('settings');
    const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: 'http://hooks.example.com/agw' } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(['body', 'webhook_url']);
  });

  test('the test delivery needs a webhook_url (409) and a known event (422)', async () => {
    const t = await tenant('settings');
    expect((await api('POST', '/webhooks/test', { key: t.apiKey })).status).toBe(409);
    const u = await withWebhook('https://127.0.0.1:9/unused', {}, 'settings');
    const bad = await api('POST', '/webhooks/test', { key: u.apiKey, body: { event: 'action.exploded' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'event']);
    expect((await api('GET', '/webhooks/deliveries?limit=0', { key: u.apiKey })).status).toBe(422);
    expect((await api('GET', '/webhooks/deliveries/not-a-uuid', { key: u.apiKey })).status).toBe(404);
  });

  test('a private address is refused when the settings are saved (422); delivery re-checks every attempt', async () => {
    // Delivery-time refusal (a name that resolves to a private address later, DNS rebinding) is covered by
    // services/webhook/test/delivery.int.test.ts; here the settings endpoint refuses the address up front.
    const t = await tenant('private-target');
    const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: 'https://10.20.30.40/hooks/agw' } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(['body', 'webhook_url']);
    expect(r.body.detail[0].msg).toContain('10.20.30.40 is private');
    const s = await api('GET', '/dashboard/settings', { key: t.apiKey });
    expect(s.body.webhook_url).toBeNull();
  });

});

describe('webhook service in the fleet', () => {
  test('the API description lists the webhook endpoints and /health reports the webhook service', async () => {
    const doc = await api('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/webhooks/deliveries', '/webhooks/deliveries/{delivery_id}', '/webhooks/test']));
    const health = await eventually(async () => {
      const h = await api('GET', '/health');
      return h.body?.services?.webhook === 'ok' && h;
    });
    expect(health.body.services.webhook).toBe('ok');
  });
});

describe('webhook delivery of decisions', () => {
  test('an allowed tool call reaches the receiver signed with X-Service-Signature (verified in constant time)', async () => {
    const rx = await receiver();
    const t = await withWebhook(rx.url);
    const r = await call(t.apiKey);
    expect(r.status).toBe(200);
    const [req] = await eventually(async () => rx.forAction(r.body.action_id).length > 0 && rx.forAction(r.body.action_id));
    expect(verify(t.secret, req.raw, req.headers['x-service-signature'])).toBe(true);
    expect(verify(`${t.secret}x`, req.raw, req.headers['x-service-signature'])).toBe(false);
    expect(req.json).toEqual({
      event: 'action.allowed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/),
      data: {
        action_id: r.body.action_id,
        agent_id: 'agent-1',
        tool: 'svc_web_search',
        method: 'search',
        decision: 'allow',
        violations: [],
        severity: expect.any(String),
        requires_human: false,
      },
    });
    const d = await deliveryOf(t.apiKey, r.body.action_id);
    expect(d).toMatchObject({ event: 'action.allowed', status: 'delivered', attempts: 1, last_status_code: 200 });
    expect(d.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'success', duration_ms: expect.any(Number) })]);
  });

  test('a tenant without a webhook: its decision goes under nohook.decisions. (never to the webhook service); the first call after a URL is saved is delivered', async () => {
    const t = await tenant('late');
    const quiet = await call(t.apiKey);
    expect(quiet.status).toBe(200);
    const nc = await connect({ servers: '127.0.0.1:4222', name: 'e2e-nohook' });
    try {
      const jsm = await nc.jetstreamManager();
      const onStream = await eventually(async () => {
        const m = await jsm.streams.getMessage(`${E2E_STREAM_PREFIX}_DECISIONS`, { last_by_subj: `${E2E_STREAM_PREFIX}.nohook.decisions.${t.tenantId}.allowed` }).catch(() => undefined);
        return m?.json<{ action_id: string }>();
      });
      expect(onStream.action_id).toBe(quiet.body.action_id);
    } finally {
      await nc.close();
    }
    const rx = await receiver();
    await withWebhook(rx.url, {}, 'late');
    const hooked = await call(t.apiKey);
    expect(hooked.status).toBe(200);
    const [req] = await eventually(async () => rx.forAction(hooked.body.action_id).length > 0 && rx.forAction(hooked.body.action_id));
    expect(req.json).toMatchObject({ event: 'action.allowed', data: { action_id: hooked.body.action_id } });
    expect(rx.forAction(quiet.body.action_id)).toEqual([]);
    const none = await api('GET', `/webhooks/deliveries?action_id=${quiet.body.action_id}`, { key: t.apiKey });
    expect(none.body.deliveries).toEqual([]);
  });

  test('a pending action goes to a tenant subscribed to action.pending_approval under that name; unsubscribed kinds do not', async () => {
    const rx = await receiver();
    const t = await withWebhook(rx.url, { webhook_events: ['action.pending_approval'] });
    const allowed = await call(t.apiKey);
    const pending = await call(t.apiKey, { agent_id: 'destroyer', method: 'delete' });
    expect(allowed.status).toBe(200);
    expect(pending.status).toBe(202);
    const [req] = await eventually(async () => rx.forAction(pending.body.action_id).length > 0 && rx.forAction(pending.body.action_id));
    expect(req.json).toMatchObject({ event: 'action.pending_approval', data: { decision: 'requires_human', requires_human: true } });
    await sleep(1000);
    expect(rx.forAction(allowed.body.action_id)).toEqual([]);
  });

  test('a receiver that fails three times gets the event on the fourth attempt at 2, 4 and 8 s', async () => {
    const rx = await receiver((n) => (n <= 3 ? 503 : 204));
    const t = await withWebhook(rx.url);
    const r = await call(t.apiKey);
    expect(r.status).toBe(200);
    const d = await deliveryOf(t.apiKey, r.body.action_id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 204 });
    expect(d.attempt_log.map((a: any) => [a.attempt, a.status_code])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 204],
    ]);
    const at = rx.got.map((g) => g.at);
    const gaps = at.slice(1).map((x, i) => (x - at[i]) / 1000);
    expect(gaps[0]).toBeGreaterThanOrEqual(1.8);
    expect(gaps[0]).toBeLessThan(3.5);
    expect(gaps[1]).toBeGreaterThanOrEqual(3.8);
    expect(gaps[1]).toBeLessThan(5.5);
    expect(gaps[2]).toBeGreaterThanOrEqual(7.8);
    expect(gaps[2]).toBeLessThan(9.5);
  });

  test('a receiver that always fails: the delivery ends as failed after four attempts; the decision is unchanged', async () => {
    const rx = await receiver(() => 500);
    const t = await withWebhook(rx.url);
    const r = await call(t.apiKey);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('allowed');
    const d = await deliveryOf(t.apiKey, r.body.action_id);
    expect(d).toMatchObject({ status: 'failed', attempts: 4, last_status_code: 500, next_attempt_at: null });
    expect(rx.got).toHaveLength(4);
    const failed = await api('GET', `/webhooks/deliveries?status=failed&action_id=${r.body.action_id}`, { key: t.apiKey });
    expect(failed.body.deliveries.map((x: any) => x.delivery_id)).toEqual([d.delivery_id]);
    const audit = await api('GET', '/audit/log?limit=10', { key: t.apiKey });
    expect(audit.body.records.find((x: any) => x.action_id === r.body.action_id).decision).toBe('allow');
  });

  test('a receiver that never answers does not slow the tool-call path', async () => {
    const rx = await receiver(() => 'hang');
    const t = await withWebhook(rx.url);
    await call(t.apiKey); // warm-up (policy bundle, caches)
    const t0 = Date.now();
    const r = await call(t.apiKey);
    const elapsed = Date.now() - t0;
    expect(r.status).toBe(200);
    expect(elapsed).toBeLessThan(1000);
    await eventually(async () => rx.got.length >= 1);
  });

  test('deliveries are per tenant: another tenant gets a 404 and an empty log', async () => {
    const rx = await receiver();
    const a = await withWebhook(rx.url);
    const b = await withWebhook(rx.url, {}, 'other');
    const r = await call(a.apiKey);
    const d = await deliveryOf(a.apiKey, r.body.action_id);
    expect((await api('GET', `/webhooks/deliveries/${d.delivery_id}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('GET', `/webhooks/deliveries?action_id=${r.body.action_id}`, { key: b.apiKey })).body.deliveries).toEqual([]);
  });

  test('the test-delivery endpoint sends a signed sample event and answers with the delivery', async () => {
    const rx = await receiver();
    const t = await withWebhook(rx.url);
    const r = await api('POST', '/webhooks/test', { key: t.apiKey, body: { event: 'action.denied' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ event: 'action.denied', status: 'delivered', test: true, attempts: 1, last_status_code: 200 });
    expect(rx.got).toHaveLength(1);
    expect(rx.got[0].json).toMatchObject({ event: 'action.denied', data: { agent_id: 'webhook-test', decision: 'deny' } });
    expect(verify(t.secret, rx.got[0].raw, rx.got[0].headers['x-service-signature'])).toBe(true);
  });
});

/** The tenant's stored settings, read straight from the e2e database (what a database reader would see). */
function storedSettings(tenantId: string): Record<string, unknown> {
  const out = execFileSync('psql', [E2E_DATABASE_URL, '-qAt', '-c', `SELECT settings::text FROM tenant_settings WHERE tenant_id = '${tenantId}'`]).toString().trim();
  return JSON.parse(out) as Record<string, unknown>;
}

describe('webhook secret at rest (sealed by the vault)', () => {
  test('the secret is stored sealed, never in clear; deliveries are still signed with it; a later save shows it again', async () => {
    const rx = await receiver();
    const t = await withWebhook(rx.url, {}, 'sealed');
    const s = storedSettings(t.tenantId);
    expect(s.webhook_secret).toBeUndefined();
    expect(JSON.parse(String(s.webhook_secret_sealed))).toMatchObject({ v: 1, key_id: `agw:${t.tenantId}:credentials`, ct: expect.any(String) });
    expect(tablesContaining(t.secret)).toEqual([]);
    const r = await call(t.apiKey);
    const [req] = await eventually(async () => rx.forAction(r.body.action_id).length > 0 && rx.forAction(r.body.action_id));
    expect(verify(t.secret, req.raw, req.headers['x-service-signature'])).toBe(true);
    // saving webhook settings again answers the same secret (unsealed for the answer, spec: Tenant settings)
    const again = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_events: ['action.allowed'] } });
    expect(again.status).toBe(200);
    expect(again.body.webhook_secret).toBe(t.secret);
    expect((await api('GET', '/dashboard/settings', { key: t.apiKey })).body).toMatchObject({ webhook_secret_set: true });
    expect((await api('GET', '/dashboard/settings', { key: t.apiKey })).body.webhook_secret).toBeUndefined();
  });

  test('a secret stored in clear before sealing is sealed by the gateway at start; deliveries are signed with it before and after', async () => {
    const rx = await receiver();
    const t = await withWebhook(rx.url, {}, 'legacy');
    const legacy = `whsec_legacy_${Date.now()}_0123456789abcdef`;
    // a row as the gateway wrote it before secrets were sealed
    execFileSync('psql', [E2E_DATABASE_URL, '-qAt', '-c', `UPDATE tenant_settings SET settings = (settings - 'webhook_secret_sealed') || jsonb_build_object('webhook_secret', '${legacy}') WHERE tenant_id = '${t.tenantId}'`]);
    const before = await call(t.apiKey);
    const [b] = await eventually(async () => rx.forAction(before.body.action_id).length > 0 && rx.forAction(before.body.action_id));
    expect(verify(legacy, b.raw, b.headers['x-service-signature'])).toBe(true);
    await fleet('kill', 'gateway');
    await fleet('start', 'gateway');
    await eventually(async () => typeof storedSettings(t.tenantId).webhook_secret_sealed === 'string', 20_000, 250);
    expect(storedSettings(t.tenantId).webhook_secret).toBeUndefined();
    expect(tablesContaining(legacy)).toEqual([]);
    const after = await call(t.apiKey);
    const [a] = await eventually(async () => rx.forAction(after.body.action_id).length > 0 && rx.forAction(after.body.action_id));
    expect(verify(legacy, a.raw, a.headers['x-service-signature'])).toBe(true);
  });
});

describe('durability', () => {
  test('killing the webhook service mid-stream and starting it again loses no event', async () => {
    const rx = await receiver();
    const t = await withWebhook(rx.url, {}, 'durability');
    const actions: string[] = [];
    for (let i = 0; i < 5; i++) actions.push((await call(t.apiKey, { agent_id: `before-${i}` })).body.action_id);
    await eventually(async () => rx.got.length >= 1);
    await fleet('kill', 'webhook');
    try {
      for (let i = 0; i < 10; i++) {
        const r = await call(t.apiKey, { agent_id: `during-${i}` });
        expect(r.status).toBe(200); // decisions never wait for webhooks
        actions.push(r.body.action_id);
      }
    } finally {
      await fleet('start', 'webhook');
    }
    for (let i = 0; i < 5; i++) actions.push((await call(t.apiKey, { agent_id: `after-${i}` })).body.action_id);
    // deliveries claimed by the killed process are due again once their lease ends (about 20 s)
    await eventually(async () => actions.every((a) => rx.forAction(a).length > 0), 60_000, 250);
    for (const a of actions) expect(verify(t.secret, rx.forAction(a)[0].raw, rx.forAction(a)[0].headers['x-service-signature'])).toBe(true);
    // the gateway's channel to the restarted service may still be in its reconnect back-off (a 502 for that
    // moment): read the log once it answers
    const log = await eventually(async () => {
      const r = await api('GET', '/webhooks/deliveries?limit=100', { key: t.apiKey });
      return r.status === 200 && r;
    });
    expect(log.body.count).toBe(actions.length);
  });
});
