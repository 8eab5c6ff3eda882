/**
 * Bad input at the edge is a 4xx with a precise detail, never a 500 (issue 14's known defects, each as it
 * was found by probing the fleet: NUL characters and lone surrogates in any string, deep nesting, an
 * invalid action id, lax checks; plus what later probing found: bodies that do not inflate, custom
 * policies that nest too deeply), 405 for a wrong method, Retry-After on every 429, single-use
 * verification links. No answer in this file is a 5xx, and the tenant's chain verifies afterwards.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { type ApiResponse, api as rawApi, eventually, newTenant, type Tenant, recordRaw, toolCall } from './support/api';
import { E2E_BASE_URL, E2E_OFFSET } from './support/e2e-env';

/** Every answer of this file, to check at the end that none was a 5xx. */
const seen: Array<[string, string, number]> = [];
async function api(method: string, p: string, o: Parameters<typeof rawApi>[2] = {}): Promise<ApiResponse> {
  const r = await rawApi(method, p, o);
  seen.push([method, p.slice(0, 80), r.status]);
  return r;
}

let t: Tenant;
beforeAll(async () => {
  t = await newTenant('Edge');
});

const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
const nested = (depth: number) => JSON.parse(nestedText(depth));

describe('input rules at the edge', () => {
  it.each([
    ['tool', { tool: 'svc\u0000x' }],
    ['method', { method: 'm\u0000' }],
    ['agent_type', { agent_type: 't\u0000' }],
    ['agent_version', { agent_version: '1.0.0\u0000' }],
    ['agent_type', { agent_type: 'lone \uD800 surrogate' }],
    ['tool', { tool: 'low \uDC00 first' }],
  ])('a NUL or lone surrogate in %s of a tool call is a 422 at its loc', async (field, over) => {
    const r = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall(over) });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ['body', field], type: 'string_invalid' });
  });

  it('rejects NUL wherever a string reaches Postgres: bodies, path and query, with or without a key', async () => {
    const cases: Array<[string, string, { body?: unknown; key?: string }, unknown[]]> = [
      ['POST', '/credentials/register', { key: t.apiKey, body: { tool_id: 'svc\u0000', name: 'n', value: 'v' } }, ['body', 'tool_id']],
      ['POST', '/credentials/register', { key: t.apiKey, body: { tool_id: 'svc', name: 'n\u0000', value: 'v' } }, ['body', 'name']],
      ['GET', '/credentials/%00/status', { key: t.apiKey }, ['path']],
      ['DELETE', '/credentials/%00/x', { key: t.apiKey }, ['path']],
      ['POST', `/approve/${randomUUID()}`, { key: t.apiKey, body: { note: 'ok\u0000' } }, ['body', 'note']],
      ['POST', '/auth/signup', { body: { email: `n-${randomUUID()}@e2e.test`, password: 'a-long-password', tenant_name: 'x\u0000' } }, ['body', 'tenant_name']],
      ['POST', '/auth/login', { body: { email: 'a\u0000@e2e.test', password: 'a-long-password' } }, ['body', 'email']],
      ['PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: 'package x\u0000' } }, ['body', 'custom_policy']],
      ['POST', '/audit/tamper-simulate', { key: t.apiKey, body: { field: 'tool', value: 'x\u0000' } }, ['body', 'value']],
      ['GET', '/webhooks/deliveries?event=%00', { key: t.apiKey }, ['query', 'event']],
      ['GET', '/credentials/access-log?tool_id=%00', { key: t.apiKey }, ['query', 'tool_id']],
      // without a key: the guard runs before authentication
      ['GET', '/credentials/%00/status', {}, ['path']],
      ['GET', '/webhooks/deliveries?event=%00', {}, ['query', 'event']],
    ];
    for (const [method, p, o, loc] of cases) {
      const r = await api(method, p, o);
      expect([method, p, r.status]).toEqual([method, p, 422]);
      expect(r.body.detail[0].loc).toEqual(loc);
    }
  });

  it('limits JSON nesting to 32 levels everywhere (5,000 and 20,000 levels were stack overflows, 2,000 were stored)', async () => {
    const deepParams = `{"agent_id":"a","agent_type":"t","agent_version":"1.0.0","tool":"x","method":"m","params":${nestedText(5000)}}`;
    const r1 = await api('POST', '/mcp/tools/call', { key: t.apiKey, rawBody: deepParams });
    expect(r1.status).toBe(422);
    expect(r1.body.detail[0]).toMatchObject({ type: 'too_deep', msg: 'nested deeper than 32 levels' });
    // the loc walks down to the first value that is too deep: body, params, then 31 × "a"
    expect(r1.body.detail[0].loc).toEqual(['body', 'params', ...Array(31).fill('a')]);
    const r2 = await api('PATCH', '/dashboard/settings', { key: t.apiKey, rawBody: `{"policy_config":${nestedText(20000)}}` });
    expect([r2.status, r2.body.detail[0].loc.slice(0, 2)]).toEqual([422, ['body', 'policy_config']]);
    const r3 = await api('POST', '/hsm/encrypt', { key: t.apiKey, rawBody: `{"subject_id":"s1","plaintext":${nestedText(5000)}}` });
    expect([r3.status, r3.body.detail[0].loc.slice(0, 2)]).toEqual([422, ['body', 'plaintext']]);
    const r4 = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ params: nested(2000) }) });
    expect([r4.status, r4.body.detail[0].type]).toEqual([422, 'too_deep']);
    // 30 levels of params are fine
    expect((await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ params: nested(30) }) })).status).toBe(200);
  });

  it('refuses __proto__ keys; constructor stays a plain key', async () => {
    const r = await api('POST', '/mcp/tools/call', { key: t.apiKey, rawBody: JSON.stringify(toolCall()).replace('"params":{', '"params":{"__proto__":{"admin":true},') });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(['body', 'params', '__proto__']);
    const ctor = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ params: { constructor: { prototype: { polluted: true } } } }) });
    expect(ctor.status).toBe(200);
  });

  it('validates what used to slip through: tamper action ids, HSM key identifiers, long tool ids and names, action_id filters', async () => {
    const tamper = await api('POST', '/audit/tamper-simulate', { key: t.apiKey, body: { action_id: 'nope' } });
    expect([tamper.status, tamper.body.detail[0].loc]).toEqual([422, ['body', 'action_id']]);
    const key = await api('POST', '/hsm/keys', { key: t.apiKey, body: { identifier: 'notanidentifier' } });
    expect([key.status, key.body.detail[0].loc]).toEqual([422, ['body', 'identifier']]);
    expect((await api('POST', '/hsm/keys', { key: t.apiKey, body: { identifier: 'jane.doe@example.com' } })).status).toBe(201);
    const longBody = await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: 'a'.repeat(5000), name: 'n', value: 'v' } });
    expect([longBody.status, longBody.body.detail[0].loc]).toEqual([422, ['body', 'tool_id']]);
    const longName = await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: 'svc', name: 'n'.repeat(257), value: 'v' } });
    expect([longName.status, longName.body.detail[0].loc]).toEqual([422, ['body', 'name']]);
    const long = await api('GET', `/credentials/${'a'.repeat(5000)}/status`, { key: t.apiKey });
    expect([long.status, long.body.detail[0].loc]).toEqual([422, ['path', 'tool_id']]);
    const filter = await api('GET', '/webhooks/deliveries?action_id=not-uuid', { key: t.apiKey });
    expect([filter.status, filter.body.detail[0].loc]).toEqual([422, ['query', 'action_id']]);
    const pct = await api('GET', '/credentials/%E0%A4%A/status', { key: t.apiKey });
    expect([pct.status, pct.body.detail[0].loc]).toEqual([422, ['path']]);
  });

  it('answers bodies that do not inflate as their Content-Encoding says with 422 (they were 500s)', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const r = await api('POST', '/mcp/tools/call', { key: t.apiKey, rawBody: 'not compressed at all', headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
      expect([encoding, r.status, r.body.detail[0].loc, r.body.detail[0].type]).toEqual([encoding, 422, ['body'], 'encoding_invalid']);
    }
    const res = await fetch(`${E2E_BASE_URL}/mcp/tools/call`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(toolCall())),
    });
    await recordRaw('POST', '/mcp/tools/call', res);
    expect(res.status).toBe(200);
  });

  it('answers custom policies that nest too deeply with 422 at custom_policy (a 500 and a 502 before)', async () => {
    for (const source of [
      `package agw.custom\nx := ${'['.repeat(5000)}${']'.repeat(5000)}`,
      `package agw.custom\nx := 1${' + 1'.repeat(50000)}`,
      `package agw.custom\n${Array.from({ length: 5000 }, (_, i) => `r${i} := r${i + 1}`).join('\n')}\nr5000 := 1`,
    ]) {
      const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: source } });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', 'custom_policy']);
      expect(r.body.detail[0].msg).toMatch(/nested deeper than 256|more than 256 chained operators|nests too deeply/);
    }
  });

  it('answers a wrong method with 405, Allow and {"detail":"Method Not Allowed"}, with or without a key; an unknown path with 404', async () => {
    const r = await api('GET', '/mcp/tools/call', { key: t.apiKey });
    expect([r.status, r.headers.get('allow'), r.body]).toEqual([405, 'POST', { detail: 'Method Not Allowed' }]);
    const put = await api('PUT', '/approvals', { key: t.apiKey });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const del = await api('POST', `/credentials/svc/${'x'}`, { key: t.apiKey });
    expect([del.status, del.headers.get('allow')]).toEqual([405, 'DELETE']);
    // public routes without a key: 405, not 401
    const signup = await api('GET', '/auth/signup');
    expect([signup.status, signup.headers.get('allow'), signup.body]).toEqual([405, 'POST', { detail: 'Method Not Allowed' }]);
    expect((await api('DELETE', '/health')).headers.get('allow')).toBe('GET, HEAD');
    expect((await api('GET', '/no/such/route', { key: t.apiKey })).status).toBe(404);
    // the right method without a key is still a 401
    expect((await api('POST', '/mcp/tools/call', { body: toolCall() })).status).toBe(401);
  });

  it('sends Retry-After with the tenant rate limit’s 429', async () => {
    const u = await newTenant('Edge 429');
    await api('PATCH', '/dashboard/settings', { key: u.apiKey, body: { rate_limit_rps: 1, rate_limit_burst: 1 } });
    let limited;
    for (let i = 0; i < 10 && !limited; i++) {
      const r = await rawApi('GET', '/approvals', { key: u.apiKey });
      if (r.status === 429) limited = r;
    }
    expect(limited?.body).toMatchObject({ error: 'rate_limit_exceeded' });
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('sends Retry-After with the managed-session limits’ 429 (concurrent: 60 s; per agent: until the oldest session leaves the 24 h window)', async () => {
    const u = await newTenant('Edge sessions');
    const cfg = await api('POST', '/managed/agents', { key: u.apiKey, body: { name: 'edge-limits', max_daily_sessions: 1 } });
    expect(cfg.status).toBe(200);
    const first = await api('POST', '/managed/sessions', { key: u.apiKey, body: { agent_id: cfg.body.id, user_message: 'Handle the ticket' } });
    expect(first.status).toBe(200);
    const again = await api('POST', '/managed/sessions', { key: u.apiKey, body: { agent_id: cfg.body.id, user_message: 'Handle the ticket' } });
    expect([again.status, again.body.detail]).toEqual([429, expect.stringMatching(/Per-agent session limit exceeded/)]);
    const retry = Number(again.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(86_000);
    expect(retry).toBeLessThanOrEqual(86_400);

    const other = await api('POST', '/managed/agents', { key: u.apiKey, body: { name: 'edge-concurrent' } });
    const started = [first.body.session_id];
    for (let i = 0; i < 2; i++) started.push((await api('POST', '/managed/sessions', { key: u.apiKey, body: { agent_id: other.body.id, user_message: 'Handle the ticket' } })).body.session_id);
    const over = await api('POST', '/managed/sessions', { key: u.apiKey, body: { agent_id: other.body.id, user_message: 'Handle the ticket' } });
    expect([over.status, over.headers.get('retry-after')]).toEqual([429, '60']);
    for (const id of started) await api('POST', `/managed/sessions/${id}/interrupt`, { key: u.apiKey, body: { reason: 'edge test done' } });
  });

  it('makes a verification link single use (a second use is a 409); log-in before verification is allowed in the local profile', async () => {
    const email = `verify-${randomUUID()}@e2e.test`;
    const signup = await api('POST', '/auth/signup', { body: { email, password: 'correct-horse-battery-staple', tenant_name: 'Verify' } });
    expect(signup.status).toBe(201);
    // the local profile's "mailbox": the gateway logs the link (docs/auth.md)
    const log = path.resolve(__dirname, '../../.run', `logs-${E2E_OFFSET}`, 'gateway.log');
    // the log line is written asynchronously (the fleet pipes each service's output to its file): wait for it
    const line = await eventually(async () => readFileSync(log, 'utf8').split('\n').find((l) => l.includes(signup.body.user_id) && l.includes('verify_url')), 10_000);
    const link = new URL(JSON.parse(line).verify_url);
    // the e2e fleet runs the local profile: log-in works before verification (refused with 403 in production)
    expect((await api('POST', '/auth/login', { body: { email, password: 'correct-horse-battery-staple' } })).status).toBe(200);
    const once = await api('GET', `/auth/verify-email${link.search}`);
    expect([once.status, once.body]).toEqual([200, { verified: true, email }]);
    const twice = await api('GET', `/auth/verify-email${link.search}`);
    expect([twice.status, twice.body.detail]).toEqual([409, expect.stringMatching(/used already/)]);
    expect((await api('GET', '/auth/verify-email?token=not-a-token')).status).toBe(401);
  });

  it('refuses what the fuzzing (R4) found accepted: out-of-range policy numbers, dates that do not exist, a bad checkpoint format', async () => {
    for (const v of [-1, 1e308]) {
      const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_config: { daily_action_limit: v } } });
      expect([v, r.status, r.body.detail?.[0]?.loc]).toEqual([v, 422, ['body', 'policy_config', 'daily_action_limit']]);
    }
    const exp = await api('GET', `/compliance/export/${t.tenantId}?from=2020-02-30`, { key: t.apiKey });
    expect([exp.status, exp.body.detail?.[0]?.loc]).toEqual([422, ['query', 'from']]);
    // a tenant without any checkpoint yet: the bad format is still a 422 (it was a 404 before validation)
    const fresh = await newTenant('Edge no checkpoint');
    const cp = await api('GET', '/audit/checkpoints/latest?format=zz', { key: fresh.apiKey });
    expect([cp.status, cp.body.detail?.[0]?.loc]).toEqual([422, ['query', 'format']]);
    expect((await api('GET', '/audit/checkpoints/latest', { key: fresh.apiKey })).status).toBe(404);
  });

  it('answers what Node’s HTTP parser refuses in the API’s error shape: a 40 KB query is a JSON 431', async () => {
    const res = await fetch(`${E2E_BASE_URL}/audit/log?limit=${'9'.repeat(40_000)}`, { headers: { 'x-api-key': t.apiKey } });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/^Request header fields too large/);
  });

  it('leaves the tenant’s chain valid after all of it, and never answered a 5xx', async () => {
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body.valid).toBe(true);
    expect(seen.filter(([, , status]) => status >= 500)).toEqual([]);
    expect(seen.length).toBeGreaterThan(50);
  });
});
