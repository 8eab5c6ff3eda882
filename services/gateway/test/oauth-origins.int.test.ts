/**
 * The MCP OAuth server at more than one public origin (PUBLIC_ORIGINS; docs/auth.md, "The host that was
 * asked"), RFC 9207 `iss` and RFC 6750 `invalid_token` (review mcp-clients-2026-11-28, G5-G7): discovery
 * documents, the challenge and the token audience follow the Host a request came to; a token is good at
 * its own origin only. The gateway's own discovery routes, authorization server routes, challenge,
 * authentication middleware and error mapping, over real HTTP against the real Postgres.
 */
import http from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomUUID } from 'node:crypto';
import express, { Router } from 'express';
import { type Db, createLogger, openTestDb } from '@agw/shared';
import { authenticate } from '../src/http/auth.middleware';
import { errorHandler } from '../src/http/error-handler';
import { McpOauthProvider } from '../src/oauth/mcp-oauth-provider';
import { OauthRepository } from '../src/oauth/oauth.repository';
import { SERVICE_DOCUMENTATION, mcpAuthChallenge, oauthDiscoveryRoutes, oauthServerRoutes } from '../src/http/routes/oauth.routes';
import { type McpOauthUrls, mcpOauthUrls } from '../src/oauth/public-origins';
import { newApiKey } from '../src/tenants/api-keys';
import { TenantRepository } from '../src/tenants/tenant.repository';

const CB = 'http://127.0.0.1:4999/cb';
let db: Db;
let server: Server;
let port: number;
let urls: McpOauthUrls;
let provider: McpOauthProvider;
let tenantId: string;
let userId: string;
// the names the gateway is reached at (the local profile's default list), and one it is not configured for
let LOOPBACK: string;
let LOCALHOST: string;

beforeAll(async () => {
  db = await openTestDb();
  const app = express();
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
  [LOOPBACK, LOCALHOST] = [`127.0.0.1:${port}`, `localhost:${port}`];
  urls = mcpOauthUrls(`http://127.0.0.1:${port}/api`, undefined, true);
  provider = new McpOauthProvider({ repo: new OauthRepository(db), urls, consentUrl: (id) => `http://127.0.0.1:${port}/oauth/consent/${id}` });
  const api = Router();
  api.use(express.json());
  api.use('/mcp/server', mcpAuthChallenge(urls));
  api.use(oauthServerRoutes(provider, (_req, _res, next) => next()));
  // the other kinds of credentials are not used here
  api.use(authenticate({ apiKeys: {} as never, sessions: {} as never, tenants: {} as never, adminEmails: new Set(), oauth: provider }));
  api.post('/mcp/server', (req, res) => void res.json({ agent: req.auth?.agentName }));
  api.get('/actions/:id', (req, res) => void res.json({ agent: req.auth?.agentName }));
  app.use('/api', api);
  app.use(oauthDiscoveryRoutes(urls));
  app.use('/.well-known', (_req, res) => void res.status(404).json({ detail: 'Not found: no such discovery document' }));
  app.use(errorHandler(createLogger('test', 'silent')));
  tenantId = randomUUID();
  userId = randomUUID();
  await new TenantRepository(db).createTenantWithOwner({ id: tenantId, slug: `po-${tenantId}`, name: 'PO' }, { id: userId, email: `owner-${tenantId}@example.com`, passwordHash: null, isAdmin: false }, newApiKey(), {});
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await db.destroy();
});

/** One request to the server with the Host header a client configured with that name sends. */
function call(host: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: () => any }>((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, method, path, headers: { host, ...opts.headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) }));
    });
    r.on('error', reject);
    r.end(opts.body);
  });
}

const form = (fields: Record<string, string>) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
const verifier = 'w'.repeat(50);
const challenge = createHash('sha256').update(verifier).digest('base64url');

/** registration, /authorize at `host`, a human's consent: the decision's redirect and the client */
async function consentAt(host: string, extra: Record<string, string> = {}, approve = true) {
  const reg = await call(host, 'POST', '/api/oauth/register', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none', client_name: 'Origins client' }) });
  expect(reg.status).toBe(201);
  const clientId = String(reg.json().client_id);
  const q = new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: CB, code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1', ...extra });
  const a = await call(host, 'GET', `/api/oauth/authorize?${q}`);
  return { clientId, authorize: a, decide: async () => new URL((await provider.decide(String(a.headers.location).split('/').pop()!, { tenantId, userId, email: 'owner@example.com' }, { approve, agentName: 'origin-bot' })).redirect_to) };
}

async function tokensAt(host: string) {
  const { clientId, authorize, decide } = await consentAt(host);
  expect(authorize.status).toBe(302);
  const redirect = await decide();
  const res = await call(host, 'POST', '/api/oauth/token', form({ grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, client_id: clientId, redirect_uri: CB, code_verifier: verifier }));
  expect(res.status).toBe(200);
  return { clientId, redirect, tokens: res.json() as { access_token: string; refresh_token: string } };
}

describe('discovery names the host that was asked', () => {
  test('protected resource metadata (path and root form) and the 401 challenge, per listed origin; an unlisted Host gets PUBLIC_BASE_URL’s', async () => {
    for (const [host, origin] of [
      [LOCALHOST, `http://localhost:${port}`],
      [LOOPBACK, `http://127.0.0.1:${port}`],
      ['evil.example', `http://127.0.0.1:${port}`],
    ]) {
      for (const path of ['/.well-known/oauth-protected-resource/api/mcp/server', '/.well-known/oauth-protected-resource']) {
        const prm = await call(host, 'GET', path);
        expect([host, path, prm.status]).toEqual([host, path, 200]);
        expect(prm.json()).toMatchObject({ resource: `${origin}/api/mcp/server`, authorization_servers: [`${origin}/api/oauth`] });
      }
      const unauthenticated = await call(host, 'POST', '/api/mcp/server', { headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers['www-authenticate']).toBe(`Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/api/mcp/server", scope="mcp:tools"`);
    }
  });

  test('authorization server metadata (path and root form): the origin’s issuer and endpoints, RFC 9207 advertised, a well-formed service_documentation', async () => {
    for (const [host, origin] of [
      [LOCALHOST, `http://localhost:${port}`],
      [LOOPBACK, `http://127.0.0.1:${port}`],
    ]) {
      for (const path of ['/.well-known/oauth-authorization-server/api/oauth', '/.well-known/oauth-authorization-server']) {
        const as = await call(host, 'GET', path);
        expect(as.status).toBe(200);
        expect(as.json()).toMatchObject({
          issuer: `${origin}/api/oauth`,
          authorization_endpoint: `${origin}/api/oauth/authorize`,
          token_endpoint: `${origin}/api/oauth/token`,
          registration_endpoint: `${origin}/api/oauth/register`,
          revocation_endpoint: `${origin}/api/oauth/revoke`,
          authorization_response_iss_parameter_supported: true,
          service_documentation: SERVICE_DOCUMENTATION,
        });
      }
    }
    expect(SERVICE_DOCUMENTATION).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/blob\/main\/docs\/auth\.md$/);
  });

  test('OpenID discovery and any other path under /api/oauth/.well-known/ are a JSON 404, not a 401', async () => {
    for (const path of ['/api/oauth/.well-known/openid-configuration', '/api/oauth/.well-known/oauth-authorization-server', '/api/oauth/.well-known/']) {
      const res = await call(LOOPBACK, 'GET', path);
      expect([path, res.status, res.headers['content-type']]).toEqual([path, 404, expect.stringMatching(/^application\/json/)]);
      expect(res.json().detail).toMatch(/^Not found: no discovery document/);
    }
    expect((await call(LOOPBACK, 'GET', '/.well-known/openid-configuration')).status).toBe(404);
  });
});

describe('RFC 9207: iss in every authorization response', () => {
  test('the code and access_denied carry the issuer of the origin the client was sent to /authorize at', async () => {
    for (const [host, origin] of [
      [LOCALHOST, `http://localhost:${port}`],
      [LOOPBACK, `http://127.0.0.1:${port}`],
    ]) {
      const ok = await (await consentAt(host)).decide();
      expect([ok.searchParams.get('iss'), ok.searchParams.get('state'), ok.searchParams.get('code')]).toEqual([`${origin}/api/oauth`, 'st-1', expect.stringMatching(/^mcpac_/)]);
      const denied = await (await consentAt(host, {}, false)).decide();
      expect(Object.fromEntries(denied.searchParams)).toEqual({ error: 'access_denied', error_description: 'the request was denied', state: 'st-1', iss: `${origin}/api/oauth` });
    }
  });
});

describe('the token audience: the resource at one origin', () => {
  test('a token obtained through localhost works there and is invalid_token at 127.0.0.1 (and back)', async () => {
    const atLocalhost = await tokensAt(LOCALHOST);
    const atLoopback = await tokensAt(LOOPBACK);
    const mcp = (host: string, token: string) => call(host, 'POST', '/api/mcp/server', { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect((await mcp(LOCALHOST, atLocalhost.tokens.access_token)).json()).toEqual({ agent: 'origin-bot' });
    expect((await mcp(LOOPBACK, atLoopback.tokens.access_token)).json()).toEqual({ agent: 'origin-bot' });
    const crossed = await mcp(LOOPBACK, atLocalhost.tokens.access_token);
    expect(crossed.status).toBe(401);
    expect(crossed.headers['www-authenticate']).toBe(
      `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/api/mcp/server", scope="mcp:tools", error="invalid_token", error_description="the access token was issued for http://localhost:${port}/api/mcp/server, not for http://127.0.0.1:${port}/api/mcp/server"`,
    );
    expect(crossed.json()).toEqual({ detail: `The access token was issued for http://localhost:${port}/api/mcp/server, not for http://127.0.0.1:${port}/api/mcp/server` });
    expect((await mcp(LOCALHOST, atLoopback.tokens.access_token)).status).toBe(401);
    // the same audience outside the MCP server (the actions its grant queued)
    expect((await call(LOCALHOST, 'GET', '/api/actions/x', { headers: { authorization: `Bearer ${atLocalhost.tokens.access_token}` } })).json()).toEqual({ agent: 'origin-bot' });
    expect((await call(LOOPBACK, 'GET', '/api/actions/x', { headers: { authorization: `Bearer ${atLocalhost.tokens.access_token}` } })).status).toBe(401);
    // a refresh keeps the audience; asking for the other origin's resource is invalid_target
    const other = await call(LOCALHOST, 'POST', '/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: atLocalhost.tokens.refresh_token, client_id: atLocalhost.clientId, resource: `http://127.0.0.1:${port}/api/mcp/server` }));
    expect([other.status, other.json().error]).toEqual([400, 'invalid_target']);
    const refreshed = await call(LOCALHOST, 'POST', '/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: atLocalhost.tokens.refresh_token, client_id: atLocalhost.clientId }));
    expect(refreshed.status).toBe(200);
    expect((await mcp(LOCALHOST, refreshed.json().access_token)).status).toBe(200);
    expect((await mcp(LOOPBACK, refreshed.json().access_token)).status).toBe(401);
  });

  test('the authorization request and the token request may only name the resource of the origin asked', async () => {
    // /authorize at localhost for 127.0.0.1's resource: invalid_target (a registered client's error is a 400 here)
    const { authorize } = await consentAt(LOCALHOST, { resource: `http://127.0.0.1:${port}/api/mcp/server` });
    expect([authorize.status, authorize.json()]).toEqual([400, { error: 'invalid_target', error_description: `this authorization server (http://localhost:${port}/api/oauth) issues tokens for http://localhost:${port}/api/mcp/server only` }]);
    // a code issued at localhost exchanged for 127.0.0.1's resource: invalid_target
    const { clientId, decide } = await consentAt(LOCALHOST, { resource: `http://localhost:${port}/api/mcp/server` });
    const code = (await decide()).searchParams.get('code')!;
    const res = await call(LOCALHOST, 'POST', '/api/oauth/token', form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: CB, code_verifier: verifier, resource: `http://127.0.0.1:${port}/api/mcp/server` }));
    expect([res.status, res.json().error]).toEqual([400, 'invalid_target']);
  });
});

describe('RFC 6750 §3.1: invalid_token on the challenge', () => {
  test('unknown, revoked or expired mcpat_ tokens: error="invalid_token" with a description; no token: the plain challenge', async () => {
    const { clientId, tokens } = await tokensAt(LOOPBACK);
    const revoke = await call(LOOPBACK, 'POST', '/api/oauth/revoke', form({ token: tokens.access_token, client_id: clientId }));
    expect(revoke.status).toBe(200);
    const expired = await tokensAt(LOOPBACK);
    await db.updateTable('oauth_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', createHash('sha256').update(expired.tokens.access_token).digest('hex')).execute();
    for (const token of ['mcpat_unknown', tokens.access_token, expired.tokens.access_token]) {
      const res = await call(LOOPBACK, 'POST', '/api/mcp/server', { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${urls.resourceMetadata}", scope="mcp:tools", error="invalid_token", error_description="invalid, expired or revoked access token"`);
      expect(res.json()).toEqual({ detail: 'Invalid, expired or revoked access token' });
    }
    // outside the MCP server the challenge is RFC 6750's alone
    const elsewhere = await call(LOOPBACK, 'GET', '/api/actions/x', { headers: { authorization: 'Bearer mcpat_unknown' } });
    expect([elsewhere.status, elsewhere.headers['www-authenticate']]).toEqual([401, 'Bearer error="invalid_token", error_description="invalid, expired or revoked access token"']);
  });
});
