/**
 * Gateway to gateway (docs/federation.md, "Upstreams that need OAuth"): a tenant of the e2e fleet federates
 * another fleet's MCP server (`/api/mcp/server`), which is itself OAuth-protected (the MCP authorization
 * of docs/mcp-oauth.md). The second fleet runs at E2E_PORT_OFFSET + 100 with its own database, stream
 * prefix and Redis database. The first fleet's vault discovers the second's protected-resource and
 * authorization-server metadata, registers itself (RFC 7591), and a human of the first tenant clicks
 * Connect: the second fleet's authorization endpoint sends the browser to its consent page, where a human
 * of the second tenant consents (through the API the console's consent page calls), and the browser comes
 * back to the first fleet's callback with its binding cookie. A governed call through the first fleet then
 * reaches a tool the second fleet federates, governed and recorded by both.
 */
import type { ChildProcess } from 'node:child_process';
import { startFixtures } from '@agw/mcp-fixtures';
import { type Tenant, api, eventually, humanSession, newTenant } from './support/api';
import { E2E_BASE_URL, E2E_DATABASE_NAME, E2E_ENV, E2E_OFFSET, E2E_STREAM_PREFIX } from './support/e2e-env';
import { startFleetProcess, stopFleetProcess } from './support/fleet-process';

jest.setTimeout(120_000);

const OFFSET2 = E2E_OFFSET + 100;
const BASE2 = `http://127.0.0.1:${8080 + OFFSET2}/api`;
const ORIGIN2 = new URL(BASE2).origin;
const CONTROL2 = 8999 + OFFSET2;
const DB2 = `${E2E_DATABASE_NAME}_g2g`;

let fleet2: ChildProcess | undefined;
let fixtures: Awaited<ReturnType<typeof startFixtures>>;

beforeAll(async () => {
  fleet2 = await startFleetProcess({
    name: 'the second fleet',
    offset: OFFSET2,
    db: DB2,
    prefix: `${E2E_STREAM_PREFIX}G`,
    controlPort: CONTROL2,
    env: { ...E2E_ENV, REDIS_URL: `redis://127.0.0.1:6379/${1 + (Math.floor(OFFSET2 / 100) % 15)}`, DB_POOL_MAX: '5' },
  });
  fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
}, 170_000);

afterAll(async () => {
  await fixtures?.close();
  await stopFleetProcess(fleet2);
}, 40_000);

/** A tenant of the second fleet (sign-up there). */
async function tenantAt2(name: string): Promise<Tenant> {
  const email = `g2g-${Math.random().toString(36).slice(2)}@e2e.test`;
  const password = 'correct-horse-battery-staple';
  const r = await api('POST', '/auth/signup', { base: BASE2, body: { email, password, tenant_name: name } });
  expect(r.status).toBe(201);
  return { tenantId: r.body.tenant_id, apiKey: r.body.api_key, email, password, slug: r.body.slug };
}

describe('a tenant federates another gateway’s OAuth-protected MCP server', () => {
  test('discovery and registration, Connect through the second fleet’s consent, a governed call recorded by both', async () => {
    // the second fleet: its tenant federates the fixtures' MCP server (a tool `add`)
    const b = await tenantAt2('Gateway two');
    const fx = await api('POST', '/upstreams', { base: BASE2, key: b.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } });
    expect(fx.body.status).toBe('connected');
    // its MCP server asks for OAuth
    const unauth = await fetch(`${BASE2}/mcp/server`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toMatch(/resource_metadata=/);

    // the first fleet: registering it discovers the second's metadata and registers the gateway as a client
    const a = await newTenant('Gateway one');
    const reg = await api('POST', '/upstreams', { key: a.apiKey, body: { name: 'g2', url: `${BASE2}/mcp/server`, credential: { type: 'oauth' } } });
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ status: 'needs_authorization', authorization: { connected: false, client_registration: 'dynamic' } });
    expect(reg.body.authorization.server).toContain(ORIGIN2);

    // Connect: a human of the first tenant starts it (the binding cookie is set in their browser)
    const human1 = await humanSession(a);
    const started = await fetch(`${E2E_BASE_URL}/upstreams/g2/connect`, { method: 'POST', headers: { authorization: `Bearer ${human1}` } });
    expect(started.status).toBe(200);
    const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0];
    const authz = new URL(((await started.json()) as { authorization_url: string }).authorization_url);
    expect(authz.origin).toBe(ORIGIN2);
    expect(authz.searchParams.get('resource')).toBe(`${BASE2}/mcp/server`);
    expect(authz.searchParams.get('code_challenge_method')).toBe('S256');
    // the second fleet's authorization endpoint sends the browser to its consent page
    const toConsent = await fetch(authz, { redirect: 'manual' });
    expect(toConsent.status).toBe(302);
    const consentPage = new URL(toConsent.headers.get('location')!);
    expect(consentPage.origin).toBe(ORIGIN2);
    const requestId = /^\/oauth\/consent\/([A-Za-z0-9_-]+)$/.exec(consentPage.pathname)![1];
    // a human of the second tenant consents there (the API the console's consent page calls)
    const human2 = (await api('POST', '/auth/login', { base: BASE2, body: { email: b.email, password: b.password } })).body.access_token as string;
    const shown = await api('GET', `/oauth/requests/${requestId}`, { base: BASE2, token: human2 });
    expect(shown.status).toBe(200);
    const decided = await api('POST', `/oauth/requests/${requestId}/decision`, { base: BASE2, token: human2, body: { approve: true, agent_name: 'gateway-one' } });
    expect(decided.status).toBe(200);
    // back to the first fleet's callback, in the browser that started it
    const back = new URL(decided.body.redirect_to);
    expect(`${back.origin}${back.pathname}`).toBe(`${E2E_BASE_URL}/upstreams/oauth/callback`);
    const done = await fetch(back, { headers: { cookie, accept: 'application/json' } });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ status: 'connected', upstream: 'g2' });
    const up = await api('GET', '/upstreams/g2', { key: a.apiKey });
    expect(up.body.status).toBe('connected');
    expect(up.body.tools.map((t: { name: string }) => t.name)).toContain('fx__add');

    // a governed call through the first fleet reaches the second fleet's federated tool
    const r = await api('POST', '/mcp/tools/call', { key: a.apiKey, body: { agent_id: 'g2g-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'g2', method: 'fx__add', params: { a: 40, b: 2 } } });
    expect(r.status).toBe(200);
    expect(r.body.execution_result).toMatchObject({ status_code: 200, body: { content: [{ type: 'text', text: '42' }] } });

    // recorded in both audits: the first fleet's call (g2 / fx__add) and the second's (fx / add, by the granted agent)
    const rec1 = await eventually(async () => (await api('GET', '/audit/log?limit=100', { key: a.apiKey })).body.records.find((x: { action_id: string }) => x.action_id === r.body.action_id));
    expect(rec1).toMatchObject({ tool: 'g2', method: 'fx__add', decision: 'allow', agent_id: 'g2g-agent' });
    const rec2 = await eventually(async () => (await api('GET', '/audit/log?limit=100', { base: BASE2, key: b.apiKey })).body.records.find((x: { tool: string; method: string }) => x.tool === 'fx' && x.method === 'add'));
    expect(rec2).toMatchObject({ decision: 'allow', agent_id: 'gateway-one' });
  });
});
