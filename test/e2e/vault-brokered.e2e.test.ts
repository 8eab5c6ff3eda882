/**
 * E2E: agent-blind brokered execution against SoftHSM2 for real, through the public API only. A real
 * local HTTP upstream runs in this process (the local profile allows loopback upstreams); it records
 * what it receives. The credential value must reach the upstream and nothing else: not the agent's
 * response, not the audit log, not the database, Redis or any service log.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Tenant, api, call, humanSession, newTenant } from './support/api';
import { logsContaining, redisContaining, tablesContaining } from './support/stores';

jest.setTimeout(90_000);

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const hits: Hit[] = [];
let server: http.Server;
let upstream: string;
// two tenants for the whole file (signups are rate-limited per address); tests use their own tool ids
let t: Tenant;
let other: Tenant;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      hits.push(hit);
      if (req.url?.startsWith('/echo')) {
        // a careless upstream that echoes the credential back: the vault must mask it
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ you_sent: req.headers.authorization ?? req.headers['x-tool-key'] }));
        return;
      }
      if (req.url?.startsWith('/big')) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(2 * 1024 * 1024));
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, received: hit.body ? JSON.parse(hit.body) : null, path: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await newTenant('Vault Broker');
  other = await newTenant('Vault Other');
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

const secret = () => `sk-live-${randomBytes(18).toString('hex')}`;
const hitsFor = (actionId: string) => hits.filter((h) => h.headers['x-agw-action-id'] === actionId);


async function register(tenant: Tenant, body: Record<string, unknown>) {
  return api('POST', '/credentials/register', { key: tenant.apiKey, body });
}

describe('credentials and brokered execution (SoftHSM2)', () => {
  test('the health report shows the vault and its PKCS#11 token', async () => {
    const h = await api('GET', '/health');
    expect(h.body.services.vault).toBe('ok');
    expect(h.body.hsm).toEqual({ status: 'ok', backend: 'pkcs11', token_label: 'agw-vault' });
  });

  test('a registered bearer credential brokers the call to the upstream; the secret is in no response, record, table, cache or log', async () => {
    const value = secret();
    const tool = `svc_crm_${randomUUID().slice(0, 8)}`;
    const reg = await register(t, { tool_id: tool, name: 'crm-token', value, credential_type: 'bearer', upstream_url: `${upstream}/v1/contacts` });
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ status: 'registered', tool_id: tool, name: 'crm-token', credential_type: 'bearer', upstream_method: 'POST' });
    expect(JSON.stringify(reg.body)).not.toContain(value);

    const list = await api('GET', '/credentials', { key: t.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.credentials).toEqual([expect.objectContaining({ tool_id: tool, name: 'crm-token', registered_at: expect.any(String) })]);
    expect(JSON.stringify(list.body)).not.toContain(value);
    const status = await api('GET', `/credentials/${tool}/status`, { key: t.apiKey });
    expect(status.body).toMatchObject({ tool_id: tool, registered: true, name: 'crm-token' });

    const r = await call(t.apiKey, { tool, method: 'lookup', agent_id: 'broker-agent', params: { query: 'acme', limit: 5 } });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('allowed');
    expect(r.body.execution_mode).toBe('gateway_brokered');
    expect(r.body.execution_result).toEqual({ status_code: 201, body: { ok: true, received: { query: 'acme', limit: 5 }, path: '/v1/contacts' } });
    for (const k of ['opa_eval_ms', 'hsm_fetch_ms', 'execution_ms', 'total_ms']) expect(typeof r.body.latency[k]).toBe('number');
    expect(r.body.latency.total_ms).toBeGreaterThanOrEqual(r.body.latency.execution_ms);
    expect(JSON.stringify(r.body)).not.toContain(value);

    // the upstream got the secret, injected by the vault
    const got = hitsFor(r.body.action_id);
    expect(got).toHaveLength(1);
    expect(got[0].method).toBe('POST');
    expect(got[0].headers.authorization).toBe(`Bearer ${value}`);
    expect(got[0].headers['x-agw-tool']).toBe(tool);
    expect(JSON.parse(got[0].body)).toEqual({ query: 'acme', limit: 5 });

    // every use is in the access log (who, which tool, when, outcome)
    const log = await api('GET', `/credentials/access-log?tool_id=${tool}`, { key: t.apiKey });
    expect(log.status).toBe(200);
    expect(log.body.entries).toHaveLength(1);
    expect(log.body.entries[0]).toMatchObject({
      agent_id: 'broker-agent',
      tool_id: tool,
      credential_name: 'crm-token',
      action_id: r.body.action_id,
      origin: 'tool_call',
      outcome: 'executed',
      status_code: 201,
      at: expect.any(String),
    });
    expect(JSON.stringify(log.body)).not.toContain(value);

    // the audit record says brokered, holds no secret, and the chain verifies
    const audit = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
    const rec = audit.body.records.find((x: { action_id: string }) => x.action_id === r.body.action_id);
    expect(rec).toMatchObject({ decision: 'allow', execution_mode: 'gateway_brokered' });
    expect(rec.details.execution).toEqual({ status_code: 201, credential: 'crm-token' });
    expect(JSON.stringify(audit.body)).not.toContain(value);
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body.valid).toBe(true);

    // no store and no log line holds the plaintext (the credential is ciphertext in vault_credentials)
    expect(tablesContaining(tool)).toContain('public.vault_credentials');
    expect(tablesContaining(value)).toEqual([]);
    expect(await redisContaining(value)).toEqual([]);
    expect(logsContaining(value)).toEqual([]);
  });

  test('api_key and basic credentials are injected as their type says; an echoed secret is masked', async () => {
    const keyValue = secret();
    await expect(register(t, { tool_id: 'svc_search', name: 'search-key', value: keyValue, credential_type: 'api_key', header_name: 'X-Tool-Key', upstream_url: `${upstream}/search`, upstream_method: 'GET' })).resolves.toMatchObject({ status: 201 });
    const a = await call(t.apiKey, { tool: 'svc_search', method: 'query', params: { q: 'weather' } });
    expect(a.body.execution_mode).toBe('gateway_brokered');
    const ha = hitsFor(a.body.action_id)[0];
    expect(ha.method).toBe('GET');
    expect(ha.url).toBe('/search?q=weather');
    expect(ha.headers['x-tool-key']).toBe(keyValue);
    expect(ha.headers.authorization).toBeUndefined();

    const password = `pw-${randomBytes(12).toString('hex')}`;
    await expect(register(t, { tool_id: 'svc_ledger', name: 'ledger-basic', value: `svc-user:${password}`, credential_type: 'basic', upstream_url: `${upstream}/echo` })).resolves.toMatchObject({ status: 201 });
    const b = await call(t.apiKey, { tool: 'svc_ledger', method: 'post', params: { amount: 10 } });
    expect(b.body.execution_mode).toBe('gateway_brokered');
    const hb = hitsFor(b.body.action_id)[0];
    expect(hb.headers.authorization).toBe(`Basic ${Buffer.from(`svc-user:${password}`).toString('base64')}`);
    // the upstream echoed the Authorization header: the agent sees it masked
    expect(b.body.execution_result).toEqual({ status_code: 200, body: { you_sent: 'Basic [redacted]' } });
    expect(JSON.stringify(b.body)).not.toContain(password);
    expect(JSON.stringify(b.body)).not.toContain(Buffer.from(`svc-user:${password}`).toString('base64'));
  });

  test('without a credential the agent executes; another tenant never sees or uses the credential; removal is permanent', async () => {
    const owner = t;
    const tool = `svc_mail_${randomUUID().slice(0, 8)}`;
    expect((await call(owner.apiKey, { tool, method: 'send', params: { subject: 'hi' } })).body.execution_mode).toBe('agent_direct');
    expect((await register(owner, { tool_id: tool, name: 'mail', value: secret(), credential_type: 'bearer', upstream_url: `${upstream}/mail` })).status).toBe(201);

    expect((await api('GET', `/credentials/${tool}/status`, { key: other.apiKey })).body).toMatchObject({ tool_id: tool, registered: false });
    expect((await api('GET', '/credentials', { key: other.apiKey })).body.credentials.map((c: { tool_id: string }) => c.tool_id)).not.toContain(tool);
    expect((await api('DELETE', `/credentials/${tool}/mail`, { key: other.apiKey })).status).toBe(404);
    const otherCall = await call(other.apiKey, { tool, method: 'send', params: { subject: 'hi' } });
    expect(otherCall.body.execution_mode).toBe('agent_direct');
    expect(hitsFor(otherCall.body.action_id)).toHaveLength(0);

    const del = await api('DELETE', `/credentials/${tool}/mail`, { key: owner.apiKey });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ status: 'deleted', tool_id: tool, name: 'mail' });
    expect((await api('DELETE', `/credentials/${tool}/mail`, { key: owner.apiKey })).status).toBe(404);
    expect((await api('GET', `/credentials/${tool}/status`, { key: owner.apiKey })).body.registered).toBe(false);
    expect((await call(owner.apiKey, { tool, method: 'send', params: { subject: 'hi' } })).body.execution_mode).toBe('agent_direct');
  });

  test('a credential registered after calls of its tool is used by the very next call; a deleted one at once stops being used', async () => {
    const tool = `svc_cache_${randomUUID().slice(0, 8)}`;
    // the gateway now knows (and caches) that the tool has no credential
    for (let i = 0; i < 3; i++) expect((await call(t.apiKey, { tool, method: 'get', params: { i } })).body.execution_mode).toBe('agent_direct');
    expect((await register(t, { tool_id: tool, name: 'late', value: secret(), credential_type: 'bearer', upstream_url: `${upstream}/late` })).status).toBe(201);
    const next = await call(t.apiKey, { tool, method: 'get', params: { i: 3 } });
    expect(next.body.execution_mode).toBe('gateway_brokered');
    expect(hitsFor(next.body.action_id)).toHaveLength(1);
    expect((await api('DELETE', `/credentials/${tool}/late`, { key: t.apiKey })).status).toBe(200);
    const after = await call(t.apiKey, { tool, method: 'get', params: { i: 4 } });
    expect(after.body.execution_mode).toBe('agent_direct');
    expect(hitsFor(after.body.action_id)).toHaveLength(0);
  });

  test('an approved pending action with a credential is executed by the vault the same way', async () => {
    const value = secret();
    const tool = `svc_records_${randomUUID().slice(0, 8)}`;
    expect((await register(t, { tool_id: tool, name: 'records', value, credential_type: 'bearer', upstream_url: `${upstream}/records/delete` })).status).toBe(201);
    // the general template (default) queues destructive methods
    const r = await call(t.apiKey, { tool, method: 'delete', agent_id: 'cleanup-agent', params: { record: 42 } });
    expect(r.status).toBe(202);
    expect(hitsFor(r.body.action_id)).toHaveLength(0);
    const ok = await api('POST', `/approve/${r.body.action_id}`, { token: await humanSession(t), body: { note: 'fine' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'approved', action_id: r.body.action_id, execution_mode: 'gateway_brokered', execution_result: { status_code: 201 } });
    expect(JSON.stringify(ok.body)).not.toContain(value);
    const got = hitsFor(r.body.action_id);
    expect(got).toHaveLength(1);
    expect(got[0].headers.authorization).toBe(`Bearer ${value}`);
    expect(JSON.parse(got[0].body)).toEqual({ record: 42 });
    const log = await api('GET', `/credentials/access-log?tool_id=${tool}`, { key: t.apiKey });
    expect(log.body.entries).toEqual([expect.objectContaining({ action_id: r.body.action_id, origin: 'approval', outcome: 'executed', agent_id: 'cleanup-agent' })]);
  });

  test('the target guard and the limits answer with precise errors, and failures are logged as outcomes', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const r = await register(t, { tool_id: 'svc_x', name: 'n', value: 'v-123456', ...body });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', field]);
      return r;
    };
    await bad({ upstream_url: 'ftp://example.com/x' }, 'upstream_url');
    await bad({ upstream_url: 'http://user:pw@example.com/x' }, 'upstream_url');
    await bad({ upstream_url: 'not a url' }, 'upstream_url');
    await bad({ credential_type: 'kerberos' }, 'credential_type');
    await bad({ credential_type: 'basic', value: 'no-colon' }, 'value');
    await bad({ credential_type: 'bearer', header_name: 'X-Key' }, 'header_name');
    expect((await register(t, { tool_id: 'svc_x', name: 'n' })).body.detail).toEqual([expect.objectContaining({ loc: ['body', 'value'], type: 'missing' })]);

    // a response larger than the cap is refused (502 result), recorded as too_large
    expect((await register(t, { tool_id: 'svc_big', name: 'big', value: secret(), credential_type: 'bearer', upstream_url: `${upstream}/big` })).status).toBe(201);
    const big = await call(t.apiKey, { tool: 'svc_big', method: 'get', params: {} });
    expect(big.body.execution_mode).toBe('gateway_brokered');
    expect(big.body.execution_result.status_code).toBe(502);
    expect(big.body.execution_result.body.error).toMatch(/exceeds/);

    // an upstream that does not listen: 502 result, recorded as upstream_error
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect((await register(t, { tool_id: 'svc_down', name: 'down', value: secret(), credential_type: 'bearer', upstream_url: `http://127.0.0.1:${port}/x` })).status).toBe(201);
    const down = await call(t.apiKey, { tool: 'svc_down', method: 'get', params: {} });
    expect(down.body.execution_result).toEqual({ status_code: 502, body: { error: expect.stringMatching(/ECONNREFUSED/) } });
    const outcomes = async (tool: string) => (await api('GET', `/credentials/access-log?tool_id=${tool}`, { key: t.apiKey })).body.entries.map((e: { outcome: string }) => e.outcome);
    expect(await outcomes('svc_big')).toEqual(['too_large']);
    expect(await outcomes('svc_down')).toEqual(['upstream_error']);
  });
});
