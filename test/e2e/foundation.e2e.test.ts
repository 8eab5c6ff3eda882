/**
 * Issue 2, end to end through the public API of a real fleet: auth, validation, the governed tool call
 * (200/202/403/401/422/429), the approval queue, audit log + verification + tamper detection, key
 * rotation, settings, health, metrics, tenant isolation and secrets kept out of logs.
 */
import { type Tenant, api, call, humanSession, newTenant, sleep, toolCall } from './support/api';
import { logsContaining } from './support/stores';

let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  a = await newTenant('Foundation A');
  b = await newTenant('Foundation B');
});

describe('sign-up and authentication', () => {
  it('returns the API key once at sign-up and refuses a second account with the same e-mail', async () => {
    expect(a.apiKey).toMatch(/^agw_[A-Za-z0-9_-]{43}$/);
    const again = await api('POST', '/auth/signup', { body: { email: a.email, password: 'another-password', tenant_name: 'x' } });
    expect(again.status).toBe(409);
  });

  it('validates the sign-up body with 422 and loc', async () => {
    const r = await api('POST', '/auth/signup', { body: { email: 'not-an-email', password: 'short' } });
    expect(r.status).toBe(422);
    const locs = r.body.detail.map((d: { loc: string[] }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.email', 'body.password', 'body.tenant_name']));
  });

  it('answers 401 {"detail":"Invalid API key"} without a key or with a wrong one', async () => {
    for (const key of [undefined, 'agw_wrong', `${a.apiKey}x`]) {
      const r = await api('POST', '/mcp/tools/call', { key, body: toolCall() });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ detail: 'Invalid API key' });
    }
  });

  it('logs in with a password and uses the session token (JWT) as a bearer', async () => {
    const bad = await api('POST', '/auth/login', { body: { email: a.email, password: 'wrong-password' } });
    expect(bad.status).toBe(401);
    const login = await api('POST', '/auth/login', { body: { email: a.email, password: a.password } });
    expect(login.status).toBe(200);
    expect(login.body.token_type).toBe('bearer');
    const me = await api('GET', '/auth/me', { token: login.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ tenant_id: a.tenantId, email: a.email, auth_method: 'jwt' });
    expect((await api('GET', '/auth/me', { token: `${login.body.access_token}x` })).status).toBe(401);
  });

  it('rotates the key: the new one works and the old one fails at once', async () => {
    const t = await newTenant('Rotation');
    expect((await call(t.apiKey)).status).toBe(200); // old key now cached in Redis
    const r = await api('POST', '/api-keys/rotate', { key: t.apiKey });
    expect(r.status).toBe(200);
    expect(r.body.api_key).not.toBe(t.apiKey);
    expect((await call(t.apiKey)).status).toBe(401);
    expect((await call(r.body.api_key)).status).toBe(200);
  });
});

describe('POST /api/mcp/tools/call', () => {
  it('allows a benign call: 200, agent_direct, recorded with its bundle revision', async () => {
    const r = await call(a.apiKey, { params: { q: 'weather in Paris' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'allowed', execution_mode: 'agent_direct' });
    expect(r.body.action_id).toMatch(/^[0-9a-f-]{36}$/);
    const log = await api('GET', '/audit/log', { key: a.apiKey });
    const rec = log.body.records.find((x: { action_id: string }) => x.action_id === r.body.action_id);
    expect(rec).toMatchObject({ decision: 'allow', source: 'mcp_governed', agent_id: 'agent-1', tool: 'svc_web_search', method: 'search', severity: 'none' });
    expect(rec.bundle_revision).toMatch(/\S+/);
    expect(rec.record_hash).toMatch(/^[0-9a-f]{64}$/);
    // where the time went (Server-Timing, ms): the audit step, and of it the audit service's own part
    const steps = Object.fromEntries(
      String(r.headers.get('server-timing'))
        .split(',')
        .map((p) => /^\s*([\w-]+);dur=([\d.]+)/.exec(p))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1], Number(m[2])]),
    );
    expect(steps).toEqual(expect.objectContaining({ pii: expect.any(Number), policy: expect.any(Number), audit: expect.any(Number), audit_commit: expect.any(Number) }));
    expect(steps.audit_commit).toBeGreaterThan(0);
    expect(steps.audit_commit).toBeLessThanOrEqual(steps.audit);
  });

  it('escalates a destructive call to a human: 202 pending_approval', async () => {
    const r = await call(a.apiKey, { method: 'delete', params: { id: 7 } });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ status: 'pending_approval', action_id: expect.any(String), message: expect.stringContaining(r.body.action_id) });
  });

  it('denies a high-severity violation: 403 with action_id, violations, severity, alert_tier', async () => {
    const t = await newTenant('Denial');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'financial' } })).status).toBe(200);
    const r = await call(t.apiKey, { tool: 'svc_payments', method: 'transfer', params: { amount: 9000, currency: 'EUR' } });
    expect(r.status).toBe(403);
    expect(r.body.detail).toMatchObject({ violations: expect.arrayContaining(['transaction_exceeds_limit']), severity: 'high', alert_tier: 'escalate' });
    expect(r.body.detail.action_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 422 with {loc, msg, type} for every invalid field, malformed JSON and params over 64 KB', async () => {
    const bad = await api('POST', '/mcp/tools/call', { key: a.apiKey, body: { agent_id: 'bad id', agent_type: '', agent_version: '1', tool: 't', method: 'm', params: [] } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: string[] }) => d.loc[1]).sort()).toEqual(['agent_id', 'agent_type', 'agent_version', 'params']);
    for (const d of bad.body.detail) expect(d).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
    const malformed = await api('POST', '/mcp/tools/call', { key: a.apiKey, rawBody: '{"agent_id": ' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['body']);
    const big = await call(a.apiKey, { params: { blob: 'x'.repeat(64 * 1024) } });
    expect(big.status).toBe(422);
    expect(big.body.detail[0].loc).toEqual(['body', 'params']);
    const nul = await call(a.apiKey, { params: { s: 'a\u0000b' } });
    expect(nul.status).toBe(422);
  });

  it('rate-limits per tenant with the spec body (429), without touching other tenants', async () => {
    const t = await newTenant('Rate');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 1, rate_limit_burst: 3 } })).status).toBe(200);
    await sleep(3100); // let the PATCH itself leave the 3 s window
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(t.apiKey)).status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses[4]).toBe(429);
    const r = await call(t.apiKey);
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: 'rate_limit_exceeded', tenant_id: t.tenantId, rate_limit_rps: 1, rate_limit_burst: 3 });
    expect((await call(b.apiKey)).status).toBe(200);
  });
});

describe('approval queue', () => {
  it('lists, approves, rejects, refuses a second decision (409) and keeps history; decisions join the chain', async () => {
    const t = await newTenant('Approvals');
    const p1 = await call(t.apiKey, { method: 'delete', params: { table: 'users' } });
    const p2 = await call(t.apiKey, { method: 'purge', params: {} });
    expect([p1.status, p2.status]).toEqual([202, 202]);
    const list = await api('GET', '/approvals', { key: t.apiKey });
    expect(list.status).toBe(200);
    const item = list.body.pending.find((x: { action_id: string }) => x.action_id === p1.body.action_id);
    expect(item).toMatchObject({ agent_id: 'agent-1', tool: 'svc_web_search', method: 'delete', params: { table: 'users' }, opa_result: { requires_human: true } });
    expect(Array.isArray(item.opa_result.violations)).toBe(true);
    expect(typeof item.opa_result.severity).toBe('string');
    expect(new Date(item.queued_at).toString()).not.toBe('Invalid Date');

    // a new tenant's approvals need a signed-in human (approvals_require_human, docs/auth.md)
    const human = await humanSession(t);
    const ok = await api('POST', `/approve/${p1.body.action_id}`, { token: human, body: { note: 'looked fine' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'approved', action_id: p1.body.action_id });
    expect((await api('POST', `/approve/${p1.body.action_id}`, { token: human })).status).toBe(409);
    expect((await api('POST', `/reject/${p1.body.action_id}`, { token: human })).status).toBe(409);
    const no = await api('POST', `/reject/${p2.body.action_id}`, { token: human, body: { reason: 'not today' } });
    expect(no.body).toMatchObject({ status: 'rejected', action_id: p2.body.action_id });

    expect((await api('GET', '/approvals', { key: t.apiKey })).body.pending).toEqual([]);
    const hist = await api('GET', '/approvals/history', { key: t.apiKey });
    const h1 = hist.body.history.find((x: { action_id: string }) => x.action_id === p1.body.action_id);
    expect(h1).toMatchObject({ status: 'approved', note: 'looked fine', decided_by: expect.any(String) });
    expect(new Date(h1.decided_at).toString()).not.toBe('Invalid Date');
    expect(hist.body.history.find((x: { action_id: string }) => x.action_id === p2.body.action_id)).toMatchObject({ status: 'rejected', note: 'not today' });

    const log = (await api('GET', '/audit/log', { key: t.apiKey })).body.records;
    const cp = log.filter((x: { source: string }) => x.source === 'control_plane');
    expect(cp.map((x: { action_id: string; decision: string }) => [x.action_id, x.decision]).sort()).toEqual(
      [
        [p1.body.action_id, 'allow'],
        [p2.body.action_id, 'deny'],
      ].sort(),
    );
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body).toEqual({ valid: true, record_count: 4 });
  });

  it('answers 404 for unknown or malformed ids, and 422 for a bad body', async () => {
    const human = await humanSession(a);
    expect((await api('POST', '/approve/00000000-0000-4000-8000-000000000000', { token: human })).status).toBe(404);
    expect((await api('POST', '/approve/not-a-uuid', { token: human })).status).toBe(404);
    const p = await call(a.apiKey, { method: 'drop', params: {} });
    expect((await api('POST', `/approve/${p.body.action_id}`, { token: human, body: { note: 42 } })).status).toBe(422);
  });
});

describe('audit log and chain verification', () => {
  it('limits the log: default 200, max 1000, 422 above or for non-integers', async () => {
    expect((await api('GET', '/audit/log?limit=1000', { key: a.apiKey })).status).toBe(200);
    for (const bad of ['1001', '0', 'abc', '1.5']) {
      const r = await api('GET', `/audit/log?limit=${bad}`, { key: a.apiKey });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['query', 'limit']);
    }
    const t = await newTenant('Limit');
    for (let i = 0; i < 3; i++) await call(t.apiKey);
    expect((await api('GET', '/audit/log?limit=2', { key: t.apiKey })).body.records).toHaveLength(2);
  });

  it('verifies the chain, detects tampering (hash_mismatch) and restores', async () => {
    const t = await newTenant('Tamper');
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push((await call(t.apiKey, { params: { i } })).body.action_id);
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body).toEqual({ valid: true, record_count: 3 });
    const log = (await api('GET', '/audit/log', { key: t.apiKey })).body.records;
    const chrono = [...log].reverse();
    expect(chrono.map((r: { id: number }) => r.id)).toEqual([1, 2, 3]);
    expect(chrono[0].prev_hash).toBe('GENESIS');
    expect(chrono[1].prev_hash).toBe(chrono[0].record_hash);
    const tamper = await api('POST', '/audit/tamper-simulate', { key: t.apiKey, body: { action_id: calls[1], field: 'decision', value: 'deny' } });
    expect(tamper.status).toBe(200);
    const broken = await api('GET', '/audit/verify', { key: t.apiKey });
    // named by the tenant's record id: the second record of this tenant's chain, as the log shows it
    expect(broken.body).toEqual({ valid: false, record_count: 1, reason: 'hash_mismatch', failed_at_action_id: calls[1], failed_at_record_id: 2 });
    expect(chrono[1]).toMatchObject({ id: 2, action_id: calls[1] });
    expect((await api('POST', '/audit/tamper-restore', { key: t.apiKey })).body).toMatchObject({ status: 'restored', records_restored: 1 });
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body).toEqual({ valid: true, record_count: 3 });
    expect((await api('POST', '/audit/tamper-simulate', { key: t.apiKey, body: { field: 'nope' } })).status).toBe(422);
  });

  it("numbers each tenant's records 1..n, whatever other tenants record (no fleet-wide sequence shows)", async () => {
    const [x, y] = [await newTenant('Ids X'), await newTenant('Ids Y')];
    // y records first, then both at the same time: x's first record is still 1
    for (let i = 0; i < 3; i++) expect((await call(y.apiKey, { params: { i } })).status).toBe(200);
    const both = await Promise.all(Array.from({ length: 4 }, (_, i) => [call(x.apiKey, { params: { i } }), call(y.apiKey, { params: { i } })]).flat());
    expect(both.map((r) => r.status)).toEqual(Array(8).fill(200));
    const ids = async (t: Tenant) => ((await api('GET', '/audit/log', { key: t.apiKey })).body.records as Array<{ id: number }>).map((r) => r.id);
    expect(await ids(x)).toEqual([4, 3, 2, 1]);
    expect(await ids(y)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    // a tampered record of y is reported at y's record id (the demo's default target: the latest record)
    expect((await api('POST', '/audit/tamper-simulate', { key: y.apiKey })).status).toBe(200);
    try {
      expect((await api('GET', '/audit/verify', { key: y.apiKey })).body).toMatchObject({ valid: false, record_count: 6, failed_at_record_id: 7 });
      expect((await api('GET', '/audit/verify', { key: x.apiKey })).body).toEqual({ valid: true, record_count: 4 });
    } finally {
      expect((await api('POST', '/audit/tamper-restore', { key: y.apiKey })).body).toMatchObject({ records_restored: 1 });
    }
  });
});

describe('settings', () => {
  it('shows defaults and validates every key (HTTPS webhook, ranges, unknown keys)', async () => {
    const t = await newTenant('Settings');
    const s = await api('GET', '/dashboard/settings', { key: t.apiKey });
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ tenant_id: t.tenantId, policy_template: 'general', failure_config: { mode: 'fail-closed' }, rate_limit_rps: 50, rate_limit_burst: 100, webhook_url: null });
    expect(JSON.stringify(s.body)).not.toContain(t.apiKey);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ webhook_url: 'http://example.com/hook' }, 'webhook_url'],
      [{ webhook_url: 'https://10.1.2.3/hook' }, 'webhook_url'], // private address, refused at settings time too
      [{ webhook_url: 'https://169.254.169.254/latest/meta-data' }, 'webhook_url'], // link-local (cloud metadata)
      [{ rate_limit_rps: 0 }, 'rate_limit_rps'],
      [{ rate_limit_burst: 'many' }, 'rate_limit_burst'],
      [{ policy_template: 'nope' }, 'policy_template'],
      [{ failure_config: { mode: 'fail-sometimes' } }, 'failure_config'],
      [{ webhook_events: ['action.exploded'] }, 'webhook_events'],
      [{ no_such_key: 1 }, 'no_such_key'],
    ];
    for (const [body, key] of cases) {
      const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body });
      expect({ key, status: r.status }).toEqual({ key, status: 422 });
      expect(r.body.detail[0].loc.slice(0, 2)).toEqual(['body', key]);
    }
    const ok = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { failure_config: { mode: 'fail-open' }, rate_limit_rps: 20 } });
    expect(ok.body).toMatchObject({ failure_config: { mode: 'fail-open' }, rate_limit_rps: 20, rate_limit_burst: 100 });
  });
});

describe('tenant isolation: another tenant’s resources are not found', () => {
  it('holds for the audit log, verification, approvals, tenants and settings', async () => {
    const pa = await call(a.apiKey, { method: 'destroy', params: { secret_of: 'A' } });
    expect(pa.status).toBe(202);
    const bLog = (await api('GET', '/audit/log?limit=1000', { key: b.apiKey })).body.records;
    expect(bLog.some((x: { action_id: string }) => x.action_id === pa.body.action_id)).toBe(false);
    expect(JSON.stringify(bLog)).not.toContain('secret_of');
    const bPending = (await api('GET', '/approvals', { key: b.apiKey })).body.pending;
    expect(bPending.some((x: { action_id: string }) => x.action_id === pa.body.action_id)).toBe(false);
    const bHuman = await humanSession(b);
    expect((await api('POST', `/approve/${pa.body.action_id}`, { token: bHuman })).status).toBe(404);
    expect((await api('POST', `/reject/${pa.body.action_id}`, { token: bHuman })).status).toBe(404);
    expect((await api('GET', `/tenants/${a.tenantId}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('GET', `/tenants/${b.tenantId}`, { key: b.apiKey })).body).toMatchObject({ tenant_id: b.tenantId });
    const verifyB = (await api('GET', '/audit/verify', { key: b.apiKey })).body;
    const countB = (await api('GET', '/audit/log?limit=1000', { key: b.apiKey })).body.records.length;
    expect(verifyB.record_count).toBe(countB);
    expect((await api('GET', '/dashboard/settings', { key: b.apiKey })).body.tenant_id).toBe(b.tenantId);
    // the admin-only tenant list is refused to a tenant key
    expect((await api('GET', '/tenants', { key: b.apiKey })).status).toBe(403);
  });
});

describe('system endpoints', () => {
  it('reports health of stores, services, blockchain and Merkle', async () => {
    const h = await api('GET', '/health');
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ redis: 'ok', postgres: 'ok', nats: 'ok' });
    expect(h.body.services).toMatchObject({ policy: 'ok', audit: 'ok' });
    expect(h.body).toHaveProperty('blockchain');
    expect(h.body).toHaveProperty('merkle');
  });

  it('serves Prometheus metrics without authentication', async () => {
    const m = await api('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.body).toContain('agw_decisions_total');
    expect(m.body).toContain('agw_policy_eval_ms');
  });

  it('serves the OpenAPI 3.1.0 description', async () => {
    const o = await api('GET', '/openapi.json');
    expect(o.body.openapi).toBe('3.1.0');
    expect(o.body.info.version).toBe('1.0.0');
    expect(o.body.paths['/mcp/tools/call'].post.requestBody).toBeDefined();
  });

  it('answers unknown paths with 404 JSON', async () => {
    expect((await api('GET', '/no-such-thing', { key: a.apiKey })).status).toBe(404);
  });
});

describe('secrets never reach a log line', () => {
  it('keeps API keys and passwords out of every service log', async () => {
    for (const secret of [a.apiKey, b.apiKey, a.password]) expect(logsContaining(secret)).toEqual([]);
    expect(logsContaining('"service":"gateway"')).toContain('gateway.log'); // the search does read the logs
  });
});
