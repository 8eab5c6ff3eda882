/**
 * OAuth 2.1 of the MCP endpoints (docs/auth.md, "MCP clients: OAuth"), with the MCP SDK's own client doing
 * what Claude Desktop, Cursor or VS Code do with a URL alone: the 401 names the resource metadata, the
 * client discovers the authorization server, registers itself (RFC 7591), sends the user to authorize with
 * PKCE; a signed-in human of the tenant consents (here through the API the console's consent page calls;
 * the click in Chromium is in test/browser); the code becomes tokens; tools are listed and called, and the
 * audit record names the granted agent. Then refresh (rotation, reuse revokes the grant), revocation, and
 * the refusals: another resource, no PKCE verifier, an agent token on an approval route. The host that was
 * asked: a client configured with `localhost` reads metadata naming `localhost` and gets a token good there
 * only (PUBLIC_ORIGINS); `iss` on every authorization response (RFC 9207); `error="invalid_token"` on a
 * dead token (RFC 6750).
 */
import { startFixtures } from '@agw/mcp-fixtures';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createHash, randomBytes } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Tenant, api, humanSession, newTenant, toolCall } from './support/api';
import { MemoryAuthProvider } from './support/memory-oauth-client';
import { E2E_BASE_URL } from './support/e2e-env';
import { trustedReceiverCert } from './support/webhook-receiver-cert';

jest.setTimeout(60_000);

const ORIGIN = new URL(E2E_BASE_URL).origin;
const MCP_URL = `${E2E_BASE_URL}/mcp/server`;
const ISSUER = `${E2E_BASE_URL}/oauth`;
// the same gateway by its other loopback name (the local profile lists both: PUBLIC_ORIGINS)
const LOCAL_ORIGIN = ORIGIN.replace('127.0.0.1', 'localhost');
const LOCAL_BASE_URL = E2E_BASE_URL.replace('127.0.0.1', 'localhost');
const LOCAL_MCP_URL = `${LOCAL_BASE_URL}/mcp/server`;
const REDIRECT = 'http://127.0.0.1:9/callback'; // never fetched: the test reads the code from the redirect

const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
const mcpPost = (token: string, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) =>
  fetch(MCP_URL, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(body) });

/** The browser's part: follow /authorize to the consent page, and a human's decision through the console's API. */
async function consent(t: Tenant, authorizationUrl: URL, decision: Record<string, unknown> = { approve: true, agent_name: 'claude-desktop-e2e', scopes: ['mcp:tools'] }) {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location')!);
  expect(location.origin).toBe(ORIGIN);
  const id = /^\/oauth\/consent\/([A-Za-z0-9_-]+)$/.exec(location.pathname)![1];
  const token = await humanSession(t);
  const shown = await api('GET', `/oauth/requests/${id}`, { token });
  expect(shown.status).toBe(200);
  const decided = await api('POST', `/oauth/requests/${id}/decision`, { token, body: decision });
  expect(decided.status).toBe(200);
  return { id, shown: shown.body, redirect: new URL(decided.body.redirect_to) };
}

let t: Tenant;
let fixtures: Awaited<ReturnType<typeof startFixtures>>;
const auth = new MemoryAuthProvider(() => REDIRECT, 'E2E MCP client');

beforeAll(async () => {
  t = await newTenant('MCP OAuth');
  fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
  expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
});
afterAll(() => fixtures?.close());

describe('a standard MCP client signs in by URL alone', () => {
  test('the 401 names the resource metadata; the metadata names the authorization server; unknown discovery paths are a JSON 404', async () => {
    const res = await fetch(MCP_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer resource_metadata="([^"]+)", scope="mcp:tools"$/);
    const prmUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1];
    expect(prmUrl).toBe(`${ORIGIN}/.well-known/oauth-protected-resource/api/mcp/server`);
    const prm = await (await fetch(prmUrl)).json();
    expect(prm).toMatchObject({ resource: MCP_URL, authorization_servers: [`${E2E_BASE_URL}/oauth`], scopes_supported: ['mcp:tools'], bearer_methods_supported: ['header'] });
    expect(await (await fetch(`${ORIGIN}/.well-known/oauth-protected-resource`)).json()).toEqual(prm);
    const as = (await (await fetch(`${ORIGIN}/.well-known/oauth-authorization-server/api/oauth`)).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: `${E2E_BASE_URL}/oauth`,
      authorization_endpoint: `${E2E_BASE_URL}/oauth/authorize`,
      token_endpoint: `${E2E_BASE_URL}/oauth/token`,
      registration_endpoint: `${E2E_BASE_URL}/oauth/register`,
      revocation_endpoint: `${E2E_BASE_URL}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      authorization_response_iss_parameter_supported: true,
    });
    // a page that exists: github.com/<owner>/<repo>/blob/main/docs/auth.md
    expect(as.service_documentation).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/blob\/main\/docs\/auth\.md$/);
    // the last discovery URLs clients try: a JSON 404, not a 401
    for (const u of [`${ORIGIN}/.well-known/openid-configuration`, `${E2E_BASE_URL}/oauth/.well-known/openid-configuration`, `${E2E_BASE_URL}/oauth/.well-known/oauth-authorization-server`]) {
      const unknown = await fetch(u);
      expect([u, unknown.status, unknown.headers.get('content-type')]).toEqual([u, 404, expect.stringMatching(/application\/json/)]);
      expect(((await unknown.json()) as { detail: string }).detail).toMatch(/^Not found/);
    }
  });

  test('asked at localhost, every document names localhost (metadata in path and root form, the challenge)', async () => {
    const res = await fetch(LOCAL_MCP_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${LOCAL_ORIGIN}/.well-known/oauth-protected-resource/api/mcp/server", scope="mcp:tools"`);
    for (const path of ['/.well-known/oauth-protected-resource/api/mcp/server', '/.well-known/oauth-protected-resource']) {
      expect(await (await fetch(`${LOCAL_ORIGIN}${path}`)).json()).toMatchObject({ resource: LOCAL_MCP_URL, authorization_servers: [`${LOCAL_BASE_URL}/oauth`] });
    }
    for (const path of ['/.well-known/oauth-authorization-server/api/oauth', '/.well-known/oauth-authorization-server']) {
      expect(await (await fetch(`${LOCAL_ORIGIN}${path}`)).json()).toMatchObject({
        issuer: `${LOCAL_BASE_URL}/oauth`,
        authorization_endpoint: `${LOCAL_BASE_URL}/oauth/authorize`,
        token_endpoint: `${LOCAL_BASE_URL}/oauth/token`,
        registration_endpoint: `${LOCAL_BASE_URL}/oauth/register`,
        authorization_response_iss_parameter_supported: true,
      });
    }
    // and at 127.0.0.1, 127.0.0.1 (PUBLIC_BASE_URL's origin, also the answer to a name not listed)
    expect(await (await fetch(`${ORIGIN}/.well-known/oauth-protected-resource`)).json()).toMatchObject({ resource: MCP_URL });
  });

  test('discovery, registration, PKCE authorization with consent, tokens; the calls are the granted agent’s', async () => {
    const first = new Client({ name: 'e2e-oauth', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: auth }))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(auth.client?.client_id).toBeTruthy();
    expect(auth.authorizationUrl?.href).toMatch(new RegExp(`^${E2E_BASE_URL}/oauth/authorize\\?`));
    expect(auth.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.authorizationUrl!.searchParams.get('resource')).toBe(MCP_URL);

    const { shown, redirect } = await consent(t, auth.authorizationUrl!);
    expect(shown).toMatchObject({ client_name: 'E2E MCP client', redirect_host: '127.0.0.1:9', scopes: ['mcp:tools'], resource: MCP_URL });
    expect(redirect.origin + redirect.pathname).toBe(REDIRECT);
    expect(redirect.searchParams.get('state')).toBe(auth.authorizationUrl!.searchParams.get('state'));
    // RFC 9207: the issuer of the metadata the client read
    expect(redirect.searchParams.get('iss')).toBe(ISSUER);
    const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: auth });
    await transport.finishAuth(redirect.searchParams.get('code')!);
    expect(auth.saved).toMatchObject({ token_type: expect.stringMatching(/bearer/i), scope: 'mcp:tools', expires_in: 3600 });

    const client = new Client({ name: 'e2e-oauth', version: '1.0.0' });
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toContain('fx__add');
    const sum = await client.callTool({ name: 'fx__add', arguments: { a: 2, b: 3 } });
    expect(sum.content).toEqual([{ type: 'text', text: '5' }]);
    await client.close();
    const log = await api('GET', '/audit/log?limit=5', { key: t.apiKey });
    expect(log.body.records.find((r: { tool: string }) => r.tool === 'fx')).toMatchObject({ agent_id: 'claude-desktop-e2e', method: 'add', decision: 'allow' });
  });

  test('the token acts as an agent: never on an approval route, nowhere but the MCP server', async () => {
    const access = auth.saved!.access_token;
    expect((await api('GET', '/approvals', { token: access })).status).toBe(403);
    expect((await api('POST', '/approve/00000000-0000-4000-8000-000000000000', { token: access, body: {} })).status).toBe(403);
    expect((await api('POST', '/mcp/tools/call', { token: access, body: { agent_id: 'a', agent_type: 'b', agent_version: '1', tool: 'fx', method: 'add', params: { a: 1, b: 1 } } })).status).toBe(403);
    expect((await mcpPost(access)).status).toBe(200);
  });

  test('GET and DELETE on the MCP server answer the transport’s 405 to an OAuth token and to an agent key, as to the tenant key (an inspector-style GET)', async () => {
    const access = auth.saved!.access_token;
    const agentKey = (await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name: 'inspector-get' } })).body.api_key as string;
    const notAllowed = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, use POST' }, id: null };
    const sse = { accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    for (const [who, headers] of [
      ['OAuth token', { authorization: `Bearer ${access}` }],
      ['agent key', { 'x-api-key': agentKey }],
      ['agent key as Bearer', { authorization: `Bearer ${agentKey}` }],
      ['tenant key', { 'x-api-key': t.apiKey }],
    ] as const) {
      for (const method of ['GET', 'DELETE']) {
        for (const url of [MCP_URL, `${MCP_URL}/sessions/00000000-0000-4000-8000-000000000000`]) {
          const res = await fetch(url, { method, headers: { ...sse, ...headers } });
          expect([who, method, url, res.status, res.headers.get('allow')]).toEqual([who, method, url, 405, 'POST']);
          expect(await res.json()).toEqual(notAllowed);
        }
      }
    }
    // without credentials it is the 401 that starts the OAuth discovery
    const anonymous = await fetch(MCP_URL, { headers: sse });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+", scope="mcp:tools"$/);
  });

  test('a refresh rotates the refresh token; revoking an access token makes the next call a 401; a reused refresh token revokes the grant', async () => {
    const clientId = auth.client!.client_id;
    const before = auth.saved!;
    const refreshed = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: before.refresh_token!, client_id: clientId }));
    expect(refreshed.status).toBe(200);
    const after = (await refreshed.json()) as OAuthTokens;
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(before.access_token);
    expect((await mcpPost(after.access_token)).status).toBe(200);

    const revoked = await fetch(`${E2E_BASE_URL}/oauth/revoke`, form({ token: after.access_token, client_id: clientId }));
    expect(revoked.status).toBe(200);
    const refused = await mcpPost(after.access_token);
    expect(refused.status).toBe(401);
    // RFC 6750 §3.1: the client learns the token is dead (and refreshes), not that it lacks one
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/api/mcp/server", scope="mcp:tools", error="invalid_token", error_description="invalid, expired or revoked access token"`,
    );

    // the first refresh token again: someone holds a copy, so every token of the grant goes
    const reuse = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: before.refresh_token!, client_id: clientId }));
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe('invalid_grant');
    const dead = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: after.refresh_token!, client_id: clientId }));
    expect(dead.status).toBe(400);
    expect((await mcpPost(before.access_token)).status).toBe(401);
  });
});

describe('a client configured with localhost (as many desktop configs are)', () => {
  test('the SDK client discovers, registers, is authorized and calls tools at localhost; its token is localhost’s only', async () => {
    const local = new MemoryAuthProvider(() => REDIRECT, 'E2E localhost client');
    await expect(new Client({ name: 'e2e-localhost', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(new URL(LOCAL_MCP_URL), { authProvider: local }))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(local.authorizationUrl!.href).toMatch(new RegExp(`^${LOCAL_BASE_URL}/oauth/authorize\\?`));
    expect(local.authorizationUrl!.searchParams.get('resource')).toBe(LOCAL_MCP_URL);
    const { shown, redirect } = await consent(t, local.authorizationUrl!, { approve: true, agent_name: 'localhost-desktop' });
    expect(shown.resource).toBe(LOCAL_MCP_URL);
    expect(redirect.searchParams.get('iss')).toBe(`${LOCAL_BASE_URL}/oauth`);
    const transport = new StreamableHTTPClientTransport(new URL(LOCAL_MCP_URL), { authProvider: local });
    await transport.finishAuth(redirect.searchParams.get('code')!);
    const client = new Client({ name: 'e2e-localhost', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.callTool({ name: 'fx__add', arguments: { a: 20, b: 22 } })).content).toEqual([{ type: 'text', text: '42' }]);
    await client.close();
    // RFC 8707: the server under its other name is another resource
    const elsewhere = await mcpPost(local.saved!.access_token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain(`error="invalid_token", error_description="the access token was issued for ${LOCAL_MCP_URL}, not for ${MCP_URL}"`);
    // inspector-style GET at localhost: the transport's 405
    const get = await fetch(LOCAL_MCP_URL, { headers: { authorization: `Bearer ${local.saved!.access_token}`, accept: 'text/event-stream' } });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
  });
});

describe('Client ID Metadata Documents (an HTTPS client_id, no registration)', () => {
  let server: https.Server;
  let base: string;
  const docs = new Map<string, Record<string, unknown>>();
  const pages = new Map<string, string>(); // answers that are no metadata document
  beforeAll(async () => {
    server = https.createServer(trustedReceiverCert(), (req, res) => {
      const page = pages.get(req.url ?? '');
      if (page !== undefined) return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      const doc = docs.get(req.url ?? '');
      if (!doc) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));

  test('the SDK client uses its metadata URL as client_id; the document names it on the consent page; the flow completes', async () => {
    const url = `${base}/clients/desktop.json`;
    docs.set('/clients/desktop.json', { client_id: url, client_name: 'Desktop via CIMD', client_uri: base, redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' });
    const as = (await (await fetch(`${ORIGIN}/.well-known/oauth-authorization-server/api/oauth`)).json()) as Record<string, unknown>;
    expect(as.client_id_metadata_document_supported).toBe(true);
    const cimd = new MemoryAuthProvider(() => REDIRECT, 'E2E MCP client');
    cimd.clientMetadataUrl = url;
    await expect(new Client({ name: 'e2e-cimd', version: '1.0.0' }).connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: cimd }))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(cimd.client?.client_id).toBe(url);
    expect(cimd.authorizationUrl!.searchParams.get('client_id')).toBe(url);
    const { shown, redirect } = await consent(t, cimd.authorizationUrl!, { approve: true, agent_name: 'desktop-cimd' });
    expect(shown).toMatchObject({ client_id: url, client_name: 'Desktop via CIMD', client_uri: base });
    const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: cimd });
    await transport.finishAuth(redirect.searchParams.get('code')!);
    const client = new Client({ name: 'e2e-cimd', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.callTool({ name: 'fx__add', arguments: { a: 6, b: 7 } })).content).toEqual([{ type: 'text', text: '13' }]);
    await client.close();
  });

  test('a document whose client_id is not its URL, or a redirect URI it does not list, gets no authorization', async () => {
    const url = `${base}/clients/liar.json`;
    docs.set('/clients/liar.json', { client_id: `${base}/clients/someone-else.json`, client_name: 'Liar', redirect_uris: [REDIRECT] });
    const u = new URL(`${E2E_BASE_URL}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: url, redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })) u.searchParams.set(k, v);
    const liar = await fetch(u, { redirect: 'manual' });
    expect(liar.status).toBe(400);
    expect(await liar.json()).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/whose client_id is exactly its URL/) });
    docs.set('/clients/honest.json', { client_id: `${base}/clients/honest.json`, client_name: 'Honest', redirect_uris: ['http://127.0.0.1:9/elsewhere'] });
    u.searchParams.set('client_id', `${base}/clients/honest.json`);
    const elsewhere = await fetch(u, { redirect: 'manual' });
    expect(elsewhere.status).toBe(400);
    expect(((await elsewhere.json()) as { error: string }).error).toBe('invalid_request');
  });

  const authorizeWith = (clientId: string, redirectUri = REDIRECT) => {
    const u = new URL(`${E2E_BASE_URL}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })) u.searchParams.set(k, v);
    return fetch(u, { redirect: 'manual' });
  };

  test('a document’s javascript:, data: or plain-http redirect URI is refused: invalid_client naming the rule, no redirect, no consent page', async () => {
    for (const [i, uri] of ['javascript:fetch(`//attacker.example/`)//', 'data:text/html,<script>alert(1)</script>', 'http://evil.example/cb', 'ms-msdt:/id PCWDiagnostic'].entries()) {
      const path = `/clients/unsafe-${i}.json`;
      docs.set(path, { client_id: `${base}${path}`, client_name: 'Claude Desktop', redirect_uris: [uri] });
      const res = await authorizeWith(`${base}${path}`, uri);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/never a redirect URI|loopback|scheme is refused/) });
    }
  });

  test('what a metadata-document address answers is not told to the caller (no port-scan oracle): a closed port, a 404 and an HTML page all read alike', async () => {
    pages.set('/clients/page.html', '<html>a web page</html>');
    const closed = 'https://127.0.0.1:1/clients/x.json'; // nothing listens
    const answers = [];
    for (const clientId of [closed, `${base}/clients/absent.json`, `${base}/clients/page.html`]) {
      const res = await authorizeWith(clientId);
      expect(res.status).toBe(400);
      answers.push(await res.json());
    }
    expect(answers[0]).toEqual({ error: 'invalid_client', error_description: expect.stringMatching(/could not be fetched, or is not a JSON object/) });
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(JSON.stringify(answers)).not.toMatch(/ECONN|EPROTO|404|html/i);
  });

  test('an error goes back to a document’s redirect URI only on the document’s own host; elsewhere it is a 400', async () => {
    const url = `${base}/clients/two-hosts.json`;
    docs.set('/clients/two-hosts.json', { client_id: url, client_name: 'Two hosts', redirect_uris: [REDIRECT, 'http://localhost:9/callback'] });
    const u = new URL(`${E2E_BASE_URL}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: url, redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'admin' })) u.searchParams.set(k, v);
    const same = await fetch(u, { redirect: 'manual' });
    expect(same.status).toBe(302);
    expect(new URL(same.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    // an error response is an authorization response too (RFC 9207)
    expect(new URL(same.headers.get('location')!).searchParams.get('iss')).toBe(ISSUER);
    u.searchParams.set('redirect_uri', 'http://localhost:9/callback');
    const other = await fetch(u, { redirect: 'manual' });
    expect(other.status).toBe(400);
    expect(other.headers.get('location')).toBeNull();
    expect(((await other.json()) as { error: string }).error).toBe('invalid_scope');
  });
});

describe('refused', () => {
  const challenge = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const authorizeUrl = (clientId: string, codeChallenge: string, extra: Record<string, string> = {}) => {
    const u = new URL(`${E2E_BASE_URL}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: codeChallenge, code_challenge_method: 'S256', state: 's1', ...extra })) u.searchParams.set(k, v);
    return u;
  };

  test('a token for another resource is never issued (a registered client’s error is a 400, never a redirect)', async () => {
    const { challenge: c } = challenge();
    const res = await fetch(authorizeUrl(auth.client!.client_id, c, { resource: 'https://other.example/mcp' }), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(((await res.json()) as { error: string }).error).toBe('invalid_target');
  });

  test('no PKCE verifier, or a wrong one, gets no token; a denied request sends access_denied back', async () => {
    const clientId = auth.client!.client_id;
    const { verifier, challenge: c } = challenge();
    const { redirect } = await consent(t, authorizeUrl(clientId, c));
    const code = redirect.searchParams.get('code')!;
    const missing = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT }));
    expect(missing.status).toBe(400);
    const wrong = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: randomBytes(32).toString('base64url') }));
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_grant');
    const right = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier }));
    expect(right.status).toBe(200);
    // once only
    const again = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier }));
    expect(again.status).toBe(400);

    const denied = await consent(t, authorizeUrl(clientId, challenge().challenge), { approve: false });
    expect(denied.redirect.searchParams.get('error')).toBe('access_denied');
    expect([denied.redirect.searchParams.get('state'), denied.redirect.searchParams.get('iss')]).toEqual(['s1', ISSUER]);
  });

  test('consent needs a signed-in human: an API key or an agent key is refused; a decided request cannot be decided again', async () => {
    const res = await fetch(authorizeUrl(auth.client!.client_id, challenge().challenge), { redirect: 'manual' });
    const id = /\/oauth\/consent\/([A-Za-z0-9_-]+)$/.exec(res.headers.get('location')!)![1];
    expect((await api('GET', `/oauth/requests/${id}`, { key: t.apiKey })).status).toBe(403);
    const agent = (await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name: 'oauth-bot' } })).body.api_key;
    expect((await api('POST', `/oauth/requests/${id}/decision`, { key: agent, body: { approve: true, agent_name: 'x' } })).status).toBe(403);
    const token = await humanSession(t);
    expect((await api('POST', `/oauth/requests/${id}/decision`, { token, body: { approve: true, agent_name: 'bad name!' } })).status).toBe(422);
    expect((await api('POST', `/oauth/requests/${id}/decision`, { token, body: { approve: true, agent_name: 'ok-agent' } })).status).toBe(200);
    expect((await api('POST', `/oauth/requests/${id}/decision`, { token, body: { approve: true, agent_name: 'ok-agent' } })).status).toBe(409);
    expect((await api('GET', '/oauth/requests/nope', { token })).status).toBe(404);
  });
});

describe('grants a tenant controls, and the refusals of the security review', () => {
  const REG = `${E2E_BASE_URL}/oauth/register`;
  const register = async (body: Record<string, unknown>) => {
    const r = await fetch(REG, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token_endpoint_auth_method: 'none', ...body }) });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const authorizeUrl = (clientId: string, codeChallenge: string) => {
    const u = new URL(`${E2E_BASE_URL}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: codeChallenge, code_challenge_method: 'S256' })) u.searchParams.set(k, v);
    return u;
  };
  /** a registered client, a human's consent, and the code exchanged: the client and its tokens */
  async function granted(tenant: Tenant, name: string) {
    const clientId = String((await register({ redirect_uris: [REDIRECT], client_name: name })).body.client_id);
    const { verifier, challenge } = pkce();
    const { redirect } = await consent(tenant, authorizeUrl(clientId, challenge), { approve: true, agent_name: 'grant-e2e' });
    const res = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier }));
    expect(res.status).toBe(200);
    return { clientId, tokens: (await res.json()) as OAuthTokens };
  }

  test('GET /oauth/grants lists the tenant’s grants for a signed-in human; DELETE revokes one with its tokens; keys get 403', async () => {
    const tenant = await newTenant('OAuth grants');
    const g = await granted(tenant, 'Grants E2E client');
    expect((await mcpPost(g.tokens.access_token)).status).toBe(200);
    const token = await humanSession(tenant);
    const list = await api('GET', '/oauth/grants', { token });
    expect(list.status).toBe(200);
    const grant = list.body.grants.find((x: { client_id: string }) => x.client_id === g.clientId);
    expect(grant).toMatchObject({ client_name: 'Grants E2E client', client_verified: false, agent_name: 'grant-e2e', scopes: ['mcp:tools'], revoked_at: null });
    expect(grant.last_used_at).toEqual(expect.any(String));
    // the absolute lifetime: 90 days (OAUTH_GRANT_MAX_AGE_DAYS) from the consent
    expect(Math.round((Date.parse(grant.expires_at) - Date.parse(grant.created_at)) / 86400_000)).toBe(90);
    expect((await api('GET', '/oauth/grants', { key: tenant.apiKey })).status).toBe(403);
    expect((await api('DELETE', `/oauth/grants/${grant.id}`, { key: tenant.apiKey })).status).toBe(403);
    expect((await api('DELETE', '/oauth/grants/not-a-uuid', { token })).status).toBe(422);
    expect((await api('DELETE', '/oauth/grants/00000000-0000-4000-8000-000000000000', { token })).status).toBe(404);
    const other = await newTenant('OAuth grants, other');
    expect((await api('DELETE', `/oauth/grants/${grant.id}`, { token: await humanSession(other) })).status).toBe(404);
    const del = await api('DELETE', `/oauth/grants/${grant.id}`, { token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: grant.id, revoked_at: expect.any(String) });
    expect((await mcpPost(g.tokens.access_token)).status).toBe(401);
    const refresh = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.clientId }));
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    const after = await api('GET', '/oauth/grants', { token });
    expect(after.body.grants.find((x: { id: string }) => x.id === grant.id).revoked_at).toBe(del.body.revoked_at);
  });

  test('rotating the tenant key ends every grant of the tenant (oauth_grants_end_on_key_rotation, on by default); turned off by a human, grants outlive it', async () => {
    const tenant = await newTenant('OAuth rotation');
    const g = await granted(tenant, 'Rotation E2E client');
    expect((await mcpPost(g.tokens.access_token)).status).toBe(200);
    const rotated = await api('POST', '/api-keys/rotate', { key: tenant.apiKey });
    expect(rotated.status).toBe(200);
    expect((await mcpPost(g.tokens.access_token)).status).toBe(401);
    const refresh = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.clientId }));
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    const key = rotated.body.api_key as string;
    // the key may not turn it off; a signed-in human may
    expect((await api('PATCH', '/dashboard/settings', { key, body: { oauth_grants_end_on_key_rotation: false } })).status).toBe(403);
    expect((await api('PATCH', '/dashboard/settings', { token: await humanSession(tenant), body: { oauth_grants_end_on_key_rotation: false } })).status).toBe(200);
    const kept = await granted({ ...tenant, apiKey: key }, 'Rotation E2E client 2');
    expect((await api('POST', '/api-keys/rotate', { key })).status).toBe(200);
    expect((await mcpPost(kept.tokens.access_token)).status).toBe(200);
  });

  test('an OAuth client reads the actions its own grant queued (the route an escalated call names); another grant’s, an agent key’s or another tenant’s is a 404', async () => {
    const tenant = await newTenant('OAuth actions');
    const other = await newTenant('OAuth actions, other');
    const tool = `svc_crm_${randomBytes(4).toString('hex')}`;
    for (const x of [tenant, other]) {
      const reg = await api('POST', '/credentials/register', { key: x.apiKey, body: { tool_id: tool, name: 'crm-token', value: 'oauth-actions-secret-1', credential_type: 'bearer', upstream_url: `${fixtures.url}/never-called` } });
      expect([200, 201]).toContain(reg.status);
    }
    /** an escalated tools/call (a delete is queued for a human under the default policy): its action id */
    const queue = async (token: string) => {
      const res = await mcpPost(token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool, arguments: { method: 'delete', params: { id: 1 } } } });
      expect(res.status).toBe(200);
      const text = ((await res.json()) as { result: { content: Array<{ text: string }> } }).result.content[0].text;
      expect(text).toMatch(/requires human approval and is queued/);
      const id = /Action ([0-9a-f-]{36})/.exec(text)![1];
      expect(text).toContain(`GET /api/actions/${id}`);
      return id;
    };
    const [a, b, c] = [await granted(tenant, 'Actions client A'), await granted(tenant, 'Actions client B'), await granted(other, 'Actions client C')];
    const [ofA, ofB, ofC] = [await queue(a.tokens.access_token), await queue(b.tokens.access_token), await queue(c.tokens.access_token)];
    const agentKey = (await api('POST', '/api-keys', { key: tenant.apiKey, body: { scope: 'agent', name: 'actions-bot' } })).body.api_key as string;
    const queuedByKey = await api('POST', '/mcp/tools/call', { key: agentKey, body: toolCall({ tool, method: 'delete', params: { id: 2 } }) });
    expect([queuedByKey.status, queuedByKey.body.status]).toEqual([202, 'pending_approval']);
    const ofAgentKey = queuedByKey.body.action_id as string;

    const mine = await api('GET', `/actions/${ofA}`, { token: a.tokens.access_token });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ action_id: ofA, status: 'pending', agent_id: 'grant-e2e', tool, method: 'delete' });
    for (const id of [ofB, ofC, ofAgentKey]) expect([id, (await api('GET', `/actions/${id}`, { token: a.tokens.access_token })).status]).toEqual([id, 404]);
    expect((await api('GET', `/actions/${ofA}`, { token: b.tokens.access_token })).status).toBe(404);
    expect((await api('GET', `/actions/${ofA}`, { key: agentKey })).status).toBe(404);
    expect((await api('GET', `/actions/${ofA}`, { token: c.tokens.access_token })).status).toBe(404);
    // the tenant sees them all; a refreshed token of the same grant still reads its grant's action
    expect((await api('GET', `/actions/${ofA}`, { key: tenant.apiKey })).status).toBe(200);
    const refreshed = (await (await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: a.tokens.refresh_token!, client_id: a.clientId }))).json()) as OAuthTokens;
    expect((await api('GET', `/actions/${ofA}`, { token: refreshed.access_token })).status).toBe(200);
    // nothing else opened: the approval queue, a decision and the action list stay closed to the token
    expect((await api('GET', '/approvals', { token: refreshed.access_token })).status).toBe(403);
    expect((await api('POST', `/approve/${ofA}`, { token: refreshed.access_token, body: {} })).status).toBe(403);
    expect((await api('GET', '/audit/log?limit=1', { token: refreshed.access_token })).status).toBe(403);
  });

  test('a refused refresh leaves the refresh token usable', async () => {
    const g = await granted(t, 'Refresh E2E client');
    const bad = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.clientId, scope: 'mcp:tools offline_access' }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('invalid_scope');
    const ok = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: g.tokens.refresh_token!, client_id: g.clientId }));
    expect(ok.status).toBe(200);
    expect((await mcpPost(((await ok.json()) as OAuthTokens).access_token)).status).toBe(200);
  });

  test('the token request must repeat the redirect_uri the authorization request carried', async () => {
    const clientId = String((await register({ redirect_uris: [REDIRECT] })).body.client_id);
    const { verifier, challenge } = pkce();
    const { redirect } = await consent(t, authorizeUrl(clientId, challenge), { approve: true, agent_name: 'grant-e2e' });
    const res = await fetch(`${E2E_BASE_URL}/oauth/token`, form({ grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, client_id: clientId, code_verifier: verifier }));
    expect(res.status).toBe(400);
    expect((await res.json()) as Record<string, string>).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/redirect_uri is required/) });
  });

  test('no open redirect: an unvalidated client’s error is a 400; unsafe redirect URIs are refused at registration', async () => {
    const evil = await register({ redirect_uris: ['https://evil.example/phish'] });
    expect(evil.status).toBe(201);
    const u = new URL(`${E2E_BASE_URL}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: String(evil.body.client_id), response_type: 'code', code_challenge: 'x', code_challenge_method: 'plain' })) u.searchParams.set(k, v);
    const res = await fetch(u, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    for (const uri of ['http://evil.example/cb', 'ms-msdt:/id PCWDiagnostic', 'javascript:alert(1)//']) {
      const r = await register({ redirect_uris: [uri] });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_client_metadata');
    }
    const big = await register({ redirect_uris: [REDIRECT], client_name: 'n'.repeat(101) });
    expect(big.status).toBe(400);
  });
});
