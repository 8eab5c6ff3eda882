/**
 * Upstreams that need OAuth (docs/federation.md, "Upstreams that need OAuth"), through the public API of a
 * running fleet, against the MCP SDK's own OAuth-protected example server (`@modelcontextprotocol/sdk`'s
 * `examples/server/simpleStreamableHttp.js --oauth-strict`, from the npm registry): its protected-resource
 * metadata names its demo authorization server, which takes dynamic registration, PKCE S256 and the
 * resource indicator (strict: a token must be issued for this server), and approves every authorization
 * at once (the demo's "sign-in"). The authorization redirect is followed with an HTTP client carrying the
 * gateway's binding cookie, as the human's browser would.
 *
 * The example issues no refresh token, offers no revocation and answers a token it no longer knows with a
 * 500, so refresh, revocation and per-user connections are proven against `@agw/mcp-fixtures`'
 * `startOAuthUpstream`: an MCP server built from the same SDK's server-side authorization code (its
 * authorization server router and bearer middleware) with refresh tokens (rotated), access tokens whose
 * lifetime the test sets (a 2-second token forces the refresh), RFC 7009 revocation, a revoked token
 * answered with 401, and one subject per signed-in user (the `fixture_user` cookie of the sign-in).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type OAuthUpstream, startOAuthUpstream } from '@agw/mcp-fixtures';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import http from 'node:http';
import path from 'node:path';
import { type Tenant, api, eventually, humanSession, newTenant } from './support/api';
import { E2E_BASE_URL, E2E_OFFSET } from './support/e2e-env';
import { logsContaining, redisContaining, streamsContaining, tablesContaining } from './support/stores';
import { script } from './support/stand-in';
import { startWebhookReceiver } from './support/webhook-receiver';

jest.setTimeout(120_000);

const e2eDir = path.resolve(__dirname);
// the package's CommonJS build (`@modelcontextprotocol/sdk/package.json` resolves to dist/cjs/package.json)
const sdkCjs = path.dirname(require.resolve('@modelcontextprotocol/sdk/package.json', { paths: [e2eDir] }));
const exampleServer = path.join(sdkCjs, 'examples', 'server', 'simpleStreamableHttp.js');

// upstream ports of this suite: 15200 + (offset / 100) % 50 * 2 (two per fleet offset)
const MCP_PORT = 15200 + ((Math.floor(E2E_OFFSET / 100) % 50) * 2);
const AUTH_PORT = MCP_PORT + 1;
const upstreamUrl = `http://localhost:${MCP_PORT}/mcp`;

let upstream: ChildProcess | undefined;
let upstreamOut = '';
const closers: Array<() => Promise<void>> = [];

async function portAnswers(port: number): Promise<boolean> {
  return new Promise<boolean>((r) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.resume();
      r(true);
    });
    req.on('error', () => r(false));
  });
}

async function startExample(): Promise<void> {
  upstream = spawn(process.execPath, [exampleServer, '--oauth-strict', '--oauth'], { env: { ...process.env, MCP_PORT: String(MCP_PORT), MCP_AUTH_PORT: String(AUTH_PORT) }, stdio: ['ignore', 'pipe', 'pipe'] });
  upstream.stdout!.on('data', (c) => (upstreamOut += c.toString()));
  upstream.stderr!.on('data', (c) => (upstreamOut += c.toString()));
  await eventually(async () => (await portAnswers(MCP_PORT)) && (await portAnswers(AUTH_PORT)), 30_000);
}

async function stopExample(): Promise<void> {
  const child = upstream;
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((r) => {
    child.once('exit', () => r());
    child.kill('SIGKILL');
  });
}

/** The bearer tokens the example server saw (it prints the authenticated request's AuthInfo). */
const seenTokens = () => [...new Set([...upstreamOut.matchAll(/token: '([0-9a-f-]{36})'/g)].map((m) => m[1]))];

/**
 * "Connect" as the human's browser does it: POST connect with the console session (which sets the binding
 * cookie), open the authorization URL (the demo server approves at once and redirects), follow the
 * redirect to the gateway's callback with the cookie.
 */
async function connect(token: string, name: string, o: { resource?: string; user?: string } = {}): Promise<{ status: number; body: any; state: string; cookie: string }> {
  const started = await fetch(`${E2E_BASE_URL}/upstreams/${name}/connect`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const body = (await started.json()) as { authorization_url: string };
  expect(started.status).toBe(200);
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0];
  expect(cookie).toMatch(/^agw_upstream_oauth=/);
  const authz = new URL(body.authorization_url);
  expect(authz.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authz.searchParams.get('resource')).toBe(o.resource ?? upstreamUrl);
  // the human's browser, signed in at the upstream (the fixture's sign-in cookie names the user)
  const approved = await fetch(authz, { redirect: 'manual', headers: o.user ? { cookie: `fixture_user=${o.user}` } : {} });
  expect(approved.status).toBe(302);
  const back = new URL(approved.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(`${E2E_BASE_URL}/upstreams/oauth/callback`);
  const done = await fetch(back, { headers: { cookie, accept: 'application/json' } });
  return { status: done.status, body: await done.json(), state: back.searchParams.get('state')!, cookie };
}

const call = (key: string, method: string, params: Record<string, unknown> = {}, tool = 'demo') =>
  api('POST', '/mcp/tools/call', { key, body: { agent_id: 'oauth-agent', agent_type: 'assistant', agent_version: '1.0.0', tool, method, params } });

beforeAll(async () => {
  await startExample();
});

afterAll(async () => {
  await stopExample();
  for (const c of closers) await c();
});

describe('a shared upstream that needs OAuth', () => {
  let t: Tenant;
  let owner: string;
  beforeAll(async () => {
    t = await newTenant('Upstream OAuth');
    owner = await humanSession(t);
  });

  test('registered with credential oauth: discovery and dynamic registration, then needs_authorization', async () => {
    const r = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'demo', url: upstreamUrl, credential: { type: 'oauth' } } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      status: 'needs_authorization',
      connection: 'shared',
      credential: { type: 'oauth' },
      tool_count: 0,
      authorization: { server: `http://localhost:${AUTH_PORT}/`, client_registration: 'dynamic', connected: false, connections: [], connect: '/api/upstreams/demo/connect' },
    });
    expect(r.body.status_reason).toMatch(/upstream_authorization_required/);
    // not connected: a governed call is refused with the reason and where to connect
    const refused = await call(t.apiKey, 'greet', { name: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail.violations).toEqual(['upstream_authorization_required']);
  });

  test('only a signed-in human connects; the API key cannot', async () => {
    const byKey = await api('POST', '/upstreams/demo/connect', { key: t.apiKey });
    expect(byKey.status).toBe(403);
    expect(byKey.body.detail).toMatch(/signed-in human/);
  });

  test('Connect: the authorization code flow ends connected, the tools are read with the token', async () => {
    const done = await connect(owner, 'demo');
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ status: 'connected', upstream: 'demo', connection: 'shared' });
    const u = await api('GET', '/upstreams/demo', { key: t.apiKey });
    expect(u.body).toMatchObject({ status: 'connected', authorization: { connected: true } });
    expect(u.body.authorization.connections).toEqual([expect.objectContaining({ user_id: null, connected_by: expect.any(String), expires_at: expect.any(String) })]);
    expect(u.body.tools.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['greet', 'multi-greet']));
    // the state was single use: the same callback again is refused
    const replay = await fetch(`${E2E_BASE_URL}/upstreams/oauth/callback?state=${encodeURIComponent(done.state)}&code=x`, { headers: { cookie: done.cookie, accept: 'application/json' } });
    expect(replay.status).toBe(401);
  });

  test('a forged state, or a state without the binding cookie of the browser that started it, is refused', async () => {
    const forged = await fetch(`${E2E_BASE_URL}/upstreams/oauth/callback?state=forged&code=x`, { headers: { accept: 'application/json' } });
    expect(forged.status).toBe(401);
    const started = await api('POST', '/upstreams/demo/connect', { token: owner });
    const approved = await fetch(started.body.authorization_url, { redirect: 'manual' });
    const back = new URL(approved.headers.get('location')!);
    // another browser (no binding cookie, or another one) cannot finish it
    const unbound = await fetch(back, { headers: { accept: 'application/json', cookie: 'agw_upstream_oauth=someone-else' } });
    expect(unbound.status).toBe(401);
    expect(((await unbound.json()) as { detail: string }).detail).toMatch(/did not start it/);
    // and the state is spent by that attempt
    expect((await fetch(back, { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  test('a governed call runs on the upstream with the upstream token; the token is stored nowhere in clear', async () => {
    const r = await call(t.apiKey, 'greet', { name: 'OAuth' });
    expect(r.status).toBe(200);
    expect(r.body.decision ?? 'allow').toBe('allow');
    expect(r.body.execution_result.status_code).toBe(200);
    expect(JSON.stringify(r.body.execution_result.body)).toContain('Hello, OAuth');
    const tokens = seenTokens();
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) {
      expect(tablesContaining(token)).toEqual([]);
      expect(logsContaining(token)).toEqual([]);
      expect(await redisContaining(token)).toEqual([]);
      expect(await streamsContaining(token)).toEqual([]);
      expect(JSON.stringify((await api('GET', '/upstreams/demo', { key: t.apiKey })).body)).not.toContain(token);
    }
  });

  test('another tenant neither sees the upstream nor reaches its connection', async () => {
    const other = await newTenant('Upstream OAuth other');
    expect((await api('GET', '/upstreams/demo', { key: other.apiKey })).status).toBe(404);
    expect((await api('POST', '/upstreams/demo/connect', { token: await humanSession(other) })).status).toBe(404);
    const r = await call(other.apiKey, 'greet', { name: 'x' });
    expect(r.body.execution_result?.body?.content).toBeUndefined();
  });

  test('Disconnect removes the connection: needs_authorization again, and calls are refused with the connect URL', async () => {
    const r = await api('DELETE', '/upstreams/demo/connection', { token: owner });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'needs_authorization', authorization: { connected: false, connections: [] } });
    const refused = await call(t.apiKey, 'greet', { name: 'x' });
    expect(refused.body.execution_result.status_code).toBe(403);
    expect(refused.body.execution_result.body).toMatchObject({ code: 'upstream_authorization_required', connect_url: '/api/upstreams/demo/connect' });
    expect((await api('DELETE', '/upstreams/demo/connection', { token: owner })).status).toBe(404);
  });
});

describe('refresh, revocation and disconnect (an authorization server that issues refresh tokens)', () => {
  let t: Tenant;
  let owner: string;
  let fx: OAuthUpstream;
  let mcp: string;
  beforeAll(async () => {
    fx = await startOAuthUpstream({ port: MCP_PORT + 2 });
    closers.push(() => fx.close());
    mcp = `${fx.url}/mcp`;
    t = await newTenant('Upstream OAuth refresh');
    owner = await humanSession(t);
    const r = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: mcp, credential: { type: 'oauth' } } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'needs_authorization', authorization: { server: `${fx.url}/`, client_registration: 'dynamic' } });
  });

  test('an access token about to expire is refreshed (the refresh token rotated) before the call', async () => {
    fx.state.ttlSeconds = 2;
    expect((await connect(owner, 'fx', { resource: mcp, user: 'alice' })).status).toBe(200);
    const first = await call(t.apiKey, 'whoami', {}, 'fx');
    expect(first.body.execution_result.status_code).toBe(200);
    expect(first.body.execution_result.body.content[0].text).toBe('alice');
    const before = fx.state.refreshes;
    expect(before).toBeGreaterThan(0); // a 2-second token is within the refresh margin at once
    await new Promise((r) => setTimeout(r, 2500));
    const second = await call(t.apiKey, 'whoami', {}, 'fx');
    expect(second.body.execution_result.status_code).toBe(200);
    expect(fx.state.refreshes).toBeGreaterThan(before);
    fx.state.ttlSeconds = 3600;
  });

  test('a grant the server revoked: needs_authorization, the webhook and a control_plane record; never a silent failure', async () => {
    const hooks = await startWebhookReceiver();
    closers.push(hooks.close);
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { webhook_url: hooks.url, webhook_events: ['upstream.authorization_required'] } })).status).toBe(200);
    expect((await connect(owner, 'fx', { resource: mcp, user: 'alice' })).status).toBe(200);
    expect((await call(t.apiKey, 'whoami', {}, 'fx')).body.execution_result.status_code).toBe(200);
    fx.revokeAll();
    const r = await call(t.apiKey, 'whoami', {}, 'fx');
    expect(r.body.execution_result.status_code).toBe(403);
    expect(r.body.execution_result.body).toMatchObject({ code: 'upstream_authorization_required', connect_url: '/api/upstreams/fx/connect' });
    const u = await api('GET', '/upstreams/fx', { key: t.apiKey });
    expect(u.body).toMatchObject({ status: 'needs_authorization', authorization: { connected: false, connections: [] } });
    const hook = await eventually(async () => hooks.got.find((h) => h.json.event === 'upstream.authorization_required'), 20_000);
    expect(hook.json.data).toMatchObject({ tool: 'fx', method: 'oauth.authorization_required', violations: ['upstream_authorization_required'] });
    const methods = await eventually(async () => {
      const l = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
      const ms = l.body.records.filter((x: { tool: string }) => x.tool === 'fx').map((x: { method: string }) => x.method);
      return ms.includes('oauth.authorization_required') ? (ms as string[]) : undefined;
    });
    expect(methods).toEqual(expect.arrayContaining(['oauth.connected', 'oauth.authorization_required']));
  });

  test('Disconnect revokes the tokens at the server (RFC 7009)', async () => {
    expect((await connect(owner, 'fx', { resource: mcp, user: 'alice' })).status).toBe(200);
    const before = fx.state.revocations.length;
    const r = await api('DELETE', '/upstreams/fx/connection', { token: owner });
    expect(r.status).toBe(200);
    expect(fx.state.revocations.slice(before).sort()).toEqual(['access_token', 'refresh_token']);
    expect((await call(t.apiKey, 'whoami', {}, 'fx')).body.execution_result.status_code).toBe(403);
  });

  test('no token the server issued is in the tables, logs, Redis or NATS in clear', async () => {
    expect(fx.state.issued.length).toBeGreaterThan(4);
    for (const token of fx.state.issued) {
      expect(tablesContaining(token)).toEqual([]);
      expect(logsContaining(token)).toEqual([]);
    }
    for (const token of fx.state.issued.slice(-4)) {
      expect(await redisContaining(token)).toEqual([]);
      expect(await streamsContaining(token)).toEqual([]);
    }
  });
});

describe('per_user connections: each human connects their own account', () => {
  const PASSWORD = 'correct-horse-battery-staple';
  let t: Tenant;
  let owner: string;
  let fx: OAuthUpstream;
  let mcp: string;

  async function member(role: string, of: Tenant = t): Promise<{ token: string; id: string }> {
    const email = `${role}-${Math.random().toString(36).slice(2)}@e2e.test`;
    const inv = await api('POST', '/members/invitations', { key: of.apiKey, body: { email, role } });
    expect(inv.status).toBe(201);
    const acc = await api('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: PASSWORD } });
    expect(acc.status).toBe(201);
    const login = await api('POST', '/auth/login', { body: { email, password: PASSWORD } });
    return { token: login.body.access_token, id: acc.body.user_id };
  }
  const callAs = (token: string) => api('POST', '/mcp/tools/call', { token, body: { agent_id: 'per-user-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'mine', method: 'whoami', params: {} } });

  beforeAll(async () => {
    fx = await startOAuthUpstream({ port: MCP_PORT + 3 });
    closers.push(() => fx.close());
    mcp = `${fx.url}/mcp`;
    t = await newTenant('Upstream OAuth per user');
    owner = await humanSession(t);
    const r = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'mine', url: mcp, credential: { type: 'oauth' }, connection: 'per_user' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ connection: 'per_user', status: 'needs_authorization' });
  });

  test('two humans connect their own accounts; each one\'s calls reach the upstream as their own subject', async () => {
    const bob = await member('admin');
    expect((await connect(owner, 'mine', { resource: mcp, user: 'alice' })).body).toEqual({ status: 'connected', upstream: 'mine', connection: 'per_user' });
    expect((await connect(bob.token, 'mine', { resource: mcp, user: 'bob' })).status).toBe(200);
    const a = await callAs(owner);
    expect(a.body.execution_result.status_code).toBe(200);
    expect(a.body.execution_result.body.content[0].text).toBe('alice');
    const b = await callAs(bob.token);
    expect(b.body.execution_result.body.content[0].text).toBe('bob');
    // the audit record names the connection's human
    const record = await eventually(async () => {
      const l = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
      return l.body.records.find((x: { action_id: string }) => x.action_id === b.body.action_id);
    });
    expect(record.details.upstream_connection).toEqual({ mode: 'per_user', user_id: bob.id });
    // owners and admins see who is connected; each member sees their own connection only
    const all = await api('GET', '/upstreams/mine', { token: owner });
    expect(all.body.authorization.connections.map((c: { user_id: string }) => c.user_id)).toHaveLength(2);
    expect(all.body.status).toBe('connected');
    const viewer = await member('viewer');
    const seen = await api('GET', '/upstreams/mine', { token: viewer.token });
    expect(seen.body.authorization).toMatchObject({ connected: false, connections: [] });
  });

  test('a human without a connection gets upstream_authorization_required with the connect URL; so does a key that acts for nobody', async () => {
    const carol = await member('admin');
    const r = await callAs(carol.token);
    expect(r.body.execution_result.status_code).toBe(403);
    expect(r.body.execution_result.body).toMatchObject({ code: 'upstream_authorization_required', connect_url: '/api/upstreams/mine/connect' });
    const byKey = await call(t.apiKey, 'whoami', {}, 'mine');
    expect(byKey.body.execution_result.status_code).toBe(403);
    expect(byKey.body.execution_result.body.error).toMatch(/acts for no human/);
  });

  test('over MCP, a call without a connection is a tool error carrying the connect URL', async () => {
    const client = new Client({ name: 'e2e-upstream-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/mcp/server`), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
    expect((await client.listTools()).tools.map((x) => x.name)).toContain('mine__whoami');
    const r = (await client.callTool({ name: 'mine__whoami', arguments: {} })) as { isError?: boolean; content: Array<{ type: string; text?: string }> };
    expect(r.isError).toBe(true);
    const text = r.content.map((c) => c.text ?? '').join(' ');
    expect(text).toMatch(/upstream_authorization_required/);
    expect(text).toContain('/api/upstreams/mine/connect');
    await client.close();
  });

  test('an agent key acts for the member who issued it', async () => {
    const dave = await member('admin');
    expect((await connect(dave.token, 'mine', { resource: mcp, user: 'dave' })).status).toBe(200);
    const issued = await api('POST', '/api-keys', { token: dave.token, body: { scope: 'agent', name: 'dave-agent' } });
    expect(issued.status).toBe(201);
    const r = await call(issued.body.api_key, 'whoami', {}, 'mine');
    expect(r.body.execution_result.status_code).toBe(200);
    expect(r.body.execution_result.body.content[0].text).toBe('dave');
  });

  test('removing a member ends their connection: no key they issued acts with their account any more', async () => {
    const erin = await member('admin');
    expect((await connect(erin.token, 'mine', { resource: mcp, user: 'erin' })).status).toBe(200);
    const issued = await api('POST', '/api-keys', { token: erin.token, body: { scope: 'agent', name: 'erin-agent' } });
    expect((await call(issued.body.api_key, 'whoami', {}, 'mine')).body.execution_result.body.content[0].text).toBe('erin');
    expect((await api('DELETE', `/members/${erin.id}`, { token: owner })).status).toBe(200);
    const after = await api('GET', '/upstreams/mine', { token: owner });
    expect(after.body.authorization.connections.map((c: { user_id: string }) => c.user_id)).not.toContain(erin.id);
    const r = await call(issued.body.api_key, 'whoami', {}, 'mine');
    expect(r.body.execution_result?.body?.content?.[0]?.text).not.toBe('erin');
  });

  test('a member connects and disconnects only their own; a viewer cannot connect a shared upstream', async () => {
    const viewer = await member('viewer');
    expect((await connect(viewer.token, 'mine', { resource: mcp, user: 'victor' })).status).toBe(200);
    expect((await api('DELETE', '/upstreams/mine/connection', { token: viewer.token })).status).toBe(200);
    expect((await api('DELETE', `/upstreams/mine/connection?user_id=someone-else`, { token: viewer.token })).status).toBe(403);
    expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'shared1', url: mcp, credential: { type: 'oauth' } } })).status).toBe(201);
    const refused = await api('POST', '/upstreams/shared1/connect', { token: viewer.token });
    expect(refused.status).toBe(403);
  });

  test('a managed session acts for the member who started it: its calls use their connection', async () => {
    const gina = await member('admin');
    expect((await connect(gina.token, 'mine', { resource: mcp, user: 'gina' })).status).toBe(200);
    const cfg = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: 'per-user-agent', allowed_tools: ['mine__whoami'] } });
    expect(cfg.status).toBe(200);
    // started by gina's console session: the session's own MCP token acts for her
    const s = await api('POST', '/managed/sessions', { token: gina.token, body: { agent_id: cfg.body.id, user_message: 'who am I?' } });
    expect(s.status).toBe(200);
    const { results } = await script(s.body.anthropic_session_id, [{ mcp_call: { tool: 'mine__whoami', arguments: {} } }]);
    expect(results[0].content[0].text).toBe('gina');
    const record = await eventually(async () => {
      const l = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
      return l.body.records.find((x: { tool: string; session_id?: string }) => x.tool === 'mine' && x.session_id === s.body.session_id);
    });
    expect(record.details.upstream_connection).toEqual({ mode: 'per_user', user_id: gina.id });
    // started with the tenant key (no member): its calls act for nobody, a per_user upstream refuses them
    const byKey = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: cfg.body.id, user_message: 'who am I?' } });
    const refused = await script(byKey.body.anthropic_session_id, [{ mcp_call: { tool: 'mine__whoami', arguments: {} } }]);
    expect(JSON.stringify(refused.results[0])).toMatch(/upstream_authorization_required/);
  });

  test('an approved action runs with the connection of the human its call acted for, not the approver\'s', async () => {
    const t2 = await newTenant('Upstream OAuth per user approvals');
    const alice = await humanSession(t2);
    const approval = ['package agw.custom', '', 'import rego.v1', '', 'approval contains "whoami needs a human" if {', '  input.method == "whoami"', '}', ''].join('\n');
    expect((await api('PATCH', '/dashboard/settings', { key: t2.apiKey, body: { policy_template: 'custom', custom_policy: approval } })).status).toBe(200);
    expect((await api('POST', '/upstreams', { key: t2.apiKey, body: { name: 'mine', url: mcp, credential: { type: 'oauth' }, connection: 'per_user' } })).status).toBe(201);
    expect((await connect(alice, 'mine', { resource: mcp, user: 'alice2' })).status).toBe(200);
    const hank = await member('admin', t2);
    expect((await connect(hank.token, 'mine', { resource: mcp, user: 'hank' })).status).toBe(200);
    const issued = await api('POST', '/api-keys', { token: alice, body: { scope: 'agent', name: 'alice-agent' } });
    const queued = await call(issued.body.api_key, 'whoami', {}, 'mine');
    expect(queued.status).toBe(202);
    expect(queued.body.status).toBe('pending_approval');
    const decided = await api('POST', `/approve/${queued.body.action_id}`, { token: hank.token, body: {} });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: 'approved', execution_mode: 'gateway_brokered' });
    expect(decided.body.execution_result.body.content[0].text).toBe('alice2');
  });

  test('a 2026-07-28 client that declared URL-mode elicitation is sent to Connect; its retry after connecting runs the call', async () => {
    const ivan = await member('admin');
    const modern = async (params: Record<string, unknown>) => {
      const res = await fetch(`${E2E_BASE_URL}/mcp/server`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ivan.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'mine__whoami' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'mine__whoami',
            arguments: {},
            ...params,
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'e2e-connect', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } },
          },
        }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { result: any }).result;
    };
    const first = await modern({});
    expect(first.resultType).toBe('input_required');
    expect(first.inputRequests.agw_connect).toMatchObject({ method: 'elicitation/create', params: { mode: 'url', url: `${new URL(E2E_BASE_URL).origin}/tools/mine` } });
    // declined: the call does not run
    const declined = await modern({ requestState: first.requestState, inputResponses: { agw_connect: { action: 'decline' } } });
    expect(declined.isError).toBe(true);
    expect(declined.content[0].text).toMatch(/did not connect mine/);
    // the human connects at the page, then the client continues with the state: the call runs as ivan
    expect((await connect(ivan.token, 'mine', { resource: mcp, user: 'ivan' })).status).toBe(200);
    const done = await modern({ requestState: first.requestState, inputResponses: { agw_connect: { action: 'accept' } } });
    expect(done.content[0].text).toBe('ivan');
  });

  test('another tenant can neither see nor use either connection', async () => {
    const other = await newTenant('Upstream OAuth per user other');
    expect((await api('GET', '/upstreams/mine', { key: other.apiKey })).status).toBe(404);
    const r = await callAs(await humanSession(other));
    expect(r.body.execution_result).toBeUndefined();
  });
});
