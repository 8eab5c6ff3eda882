/**
 * Bad input at the edge is a 4xx with a precise detail, never a 500 (issue 14's known defects, each as it
 * was found: NUL characters and lone surrogates in any string, deep nesting, an invalid action id, lax
 * checks), plus 405 for a wrong method and Retry-After on 429. The tenant's chain verifies afterwards.
 */
import { randomUUID } from 'node:crypto';
import { api, newTenant, type Tenant, toolCall } from './support/api';

let t: Tenant;
beforeAll(async () => {
  t = await newTenant('Edge');
});

const nested = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`);
const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;

describe('input rules at the edge', () => {
  it.each([
    ['tool', { tool: 'svc\u0000x' }],
    ['method', { method: 'm\u0000' }],
    ['agent_type', { agent_type: 't\u0000' }],
    ['agent_version', { agent_version: '1.0.0\u0000' }],
    ['agent_type', { agent_type: 'lone \uD800 surrogate' }],
  ])('a NUL or lone surrogate in %s of a tool call is a 422 at its loc', async (field, over) => {
    const r = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall(over) });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(['body', field]);
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
    ];
    for (const [method, path, o, loc] of cases) {
      const r = await api(method, path, o);
      expect([method, path, r.status]).toEqual([method, path, 422]);
      expect(r.body.detail[0].loc).toEqual(loc);
    }
  });

  it('limits JSON nesting to 32 levels everywhere (5,000 and 20,000 levels were stack overflows)', async () => {
    const deepParams = `{"agent_id":"a","agent_type":"t","agent_version":"1.0.0","tool":"x","method":"m","params":${nestedText(5000)}}`;
    const r1 = await api('POST', '/mcp/tools/call', { key: t.apiKey, rawBody: deepParams });
    expect(r1.status).toBe(422);
    expect(r1.body.detail[0]).toMatchObject({ type: 'too_deep' });
    expect(r1.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'params', 'a']);
    const r2 = await api('PATCH', '/dashboard/settings', { key: t.apiKey, rawBody: `{"policy_config":${nestedText(20000)}}` });
    expect(r2.status).toBe(422);
    const r3 = await api('POST', '/hsm/encrypt', { key: t.apiKey, rawBody: `{"subject_id":"s1","plaintext":${nestedText(5000)}}` });
    expect(r3.status).toBe(422);
    // 30 levels of params are fine
    expect((await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ params: nested(30) }) })).status).toBe(200);
  });

  it('refuses __proto__ keys', async () => {
    const r = await api('POST', '/mcp/tools/call', { key: t.apiKey, rawBody: JSON.stringify(toolCall()).replace('"params":{', '"params":{"__proto__":{"admin":true},') });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(['body', 'params', '__proto__']);
  });

  it('validates what used to slip through: tamper action ids, HSM key identifiers, long tool ids, action_id filters', async () => {
    const tamper = await api('POST', '/audit/tamper-simulate', { key: t.apiKey, body: { action_id: 'nope' } });
    expect([tamper.status, tamper.body.detail[0].loc]).toEqual([422, ['body', 'action_id']]);
    const key = await api('POST', '/hsm/keys', { key: t.apiKey, body: { identifier: 'notanidentifier' } });
    expect([key.status, key.body.detail[0].loc]).toEqual([422, ['body', 'identifier']]);
    expect((await api('POST', '/hsm/keys', { key: t.apiKey, body: { identifier: 'jane.doe@example.com' } })).status).toBe(201);
    const long = await api('GET', `/credentials/${'a'.repeat(5000)}/status`, { key: t.apiKey });
    expect([long.status, long.body.detail[0].loc]).toEqual([422, ['path', 'tool_id']]);
    const filter = await api('GET', '/webhooks/deliveries?action_id=not-uuid', { key: t.apiKey });
    expect([filter.status, filter.body.detail[0].loc]).toEqual([422, ['query', 'action_id']]);
    const pct = await api('GET', '/credentials/%E0%A4%A/status', { key: t.apiKey });
    expect([pct.status, pct.body.detail[0].loc]).toEqual([422, ['path']]);
  });

  it('answers a wrong method with 405 and Allow, an unknown path with 404', async () => {
    const r = await api('GET', '/mcp/tools/call', { key: t.apiKey });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    const put = await api('PUT', '/approvals', { key: t.apiKey });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await api('GET', '/no/such/route', { key: t.apiKey })).status).toBe(404);
  });

  it('sends Retry-After with every 429', async () => {
    const u = await newTenant('Edge 429');
    await api('PATCH', '/dashboard/settings', { key: u.apiKey, body: { rate_limit_rps: 1, rate_limit_burst: 1 } });
    let limited;
    for (let i = 0; i < 10 && !limited; i++) {
      const r = await api('GET', '/approvals', { key: u.apiKey });
      if (r.status === 429) limited = r;
    }
    expect(limited?.body).toMatchObject({ error: 'rate_limit_exceeded' });
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('leaves the tenant’s chain valid after all of it', async () => {
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body.valid).toBe(true);
  });
});
