/**
 * The MCP OAuth server's grant control and its refusals (docs/auth.md, "MCP clients: OAuth 2.1"; security
 * review 2026-11-28 findings 5, 6, 8, 12): the grants API (signed-in humans only), the absolute grant
 * lifetime, a grant that goes with the user who consented, a refused refresh that leaves the token usable,
 * redirect_uri at the token endpoint, the audience at every use, and no redirect of an unvalidated client's errors. The SDK's handlers on our provider over
 * real HTTP against the real Postgres, with the caller set as the authentication middleware sets it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { type Db, openTestDb } from '@agw/shared';
import { McpOauthProvider } from '../src/oauth/mcp-oauth-provider';
import { OauthRepository } from '../src/oauth/oauth.repository';
import { purgeOauth } from '../src/oauth/oauth-purge';
import { oauthGrantRoutes, oauthServerRoutes } from '../src/http/routes/oauth.routes';
import { mcpOauthUrls } from '../src/oauth/public-origins';
import type { GatewayDeps } from '../src/deps';
import { authRoutes } from '../src/http/routes/auth.routes';
import { newApiKey } from '../src/tenants/api-keys';
import { TenantRepository } from '../src/tenants/tenant.repository';
import { type ServedRoutes, asTestCaller, serveRoutes, testSettings } from './support/served-routes';

const RESOURCE = 'http://gw.test/api/mcp/server';
const CB = 'http://127.0.0.1:4999/cb';
let db: Db;
let served: ServedRoutes;
let clock = new Date();
let provider: McpOauthProvider;

function makeProvider(resource = RESOURCE, grantMaxAgeSeconds = 90 * 86400) {
  return new McpOauthProvider({ repo: new OauthRepository(db), urls: mcpOauthUrls(resource.replace(/\/mcp\/server$/, '')), consentUrl: (id) => `http://gw.test/oauth/consent/${id}`, grantMaxAgeSeconds, clock: () => clock });
}

beforeAll(async () => {
  db = await openTestDb();
  provider = makeProvider();
  const settings = testSettings(db);
  served = await serveRoutes((app) => {
    app.use(oauthServerRoutes(provider, (_req, _res, next) => next()));
    app.use(asTestCaller);
    app.use(oauthGrantRoutes(provider));
    // the rotation route with the key store stubbed: what it does to the grants is under test
    app.use(authRoutes({ settings, oauth: provider, apiKeys: { rotate: async () => ({ key: 'agw_new', keyPrefix: 'agw_new' }) }, consoleRefresh: { revokeTenant: async () => undefined } } as unknown as GatewayDeps));
  });
});
afterAll(async () => {
  await served.close();
  await db.destroy();
});
beforeEach(() => {
  clock = new Date();
});

/** each test tenant's owner, the user who consents */
const owners = new Map<string, string>();

async function newTenant(settings: Record<string, unknown> = {}): Promise<string> {
  const tenantId = randomUUID();
  const userId = randomUUID();
  await new TenantRepository(db).createTenantWithOwner({ id: tenantId, slug: `o-${tenantId}`, name: 'O' }, { id: userId, email: `owner-${tenantId}@example.com`, passwordHash: null, isAdmin: false }, newApiKey(), settings);
  owners.set(tenantId, userId);
  return tenantId;
}

async function register(body: Record<string, unknown>) {
  const r = await fetch(`${served.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

const verifier = 'v'.repeat(50);
const challenge = createHash('sha256').update(verifier).digest('base64url');

async function authorize(q: Record<string, string>) {
  return fetch(`${served.base}/oauth/authorize?${new URLSearchParams(q)}`, { redirect: 'manual' });
}

async function token(form: Record<string, string>) {
  const r = await fetch(`${served.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: r.status, body: (await r.json()) as Record<string, string> };
}

/** register, authorize, a human's consent: the client and its code */
async function consented(tenantId: string, opts: { sendRedirect?: boolean; p?: McpOauthProvider } = {}) {
  const reg = await register({ redirect_uris: [CB], token_endpoint_auth_method: 'none', client_name: 'Test client' });
  const clientId = String(reg.body.client_id);
  const q: Record<string, string> = { client_id: clientId, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' };
  if (opts.sendRedirect !== false) q.redirect_uri = CB;
  const a = await authorize(q);
  expect(a.status).toBe(302);
  const id = String(a.headers.get('location')).split('/').pop()!;
  const { redirect_to } = await (opts.p ?? provider).decide(id, { tenantId, userId: owners.get(tenantId)!, email: 'owner@example.com' }, { approve: true, agentName: 'bot' });
  return { clientId, code: String(new URL(redirect_to).searchParams.get('code')) };
}

async function tokens(tenantId: string) {
  const { clientId, code } = await consented(tenantId);
  const t = await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: CB });
  expect(t.status).toBe(200);
  return { clientId, access_token: String(t.body.access_token), refresh_token: String(t.body.refresh_token) };
}

const call = (tenantId: string, caller: string, path: string, method = 'GET') => fetch(`${served.base}${path}`, { method, headers: { 'x-test-tenant': tenantId, 'x-test-caller': caller } });

describe('grants API', () => {
  it('lists the tenant’s grants for a signed-in human, and revoking one ends its tokens', async () => {
    const tenantId = await newTenant();
    const t = await tokens(tenantId);
    expect(await provider.caller(t.access_token)).toBeDefined();
    const list = (await (await call(tenantId, 'human', '/oauth/grants')).json()) as { grants: Array<Record<string, unknown>> };
    expect(list.grants).toHaveLength(1);
    const g = list.grants[0];
    expect(g).toMatchObject({ client_id: t.clientId, client_name: 'Test client', client_verified: false, agent_name: 'bot', scopes: ['mcp:tools'], granted_by: 'owner@example.com', revoked_at: null });
    expect(typeof g.last_used_at).toBe('string'); // the access token was used above
    expect(new Date(String(g.expires_at)).getTime() - new Date(String(g.created_at)).getTime()).toBeGreaterThanOrEqual(90 * 86400_000 - 5000);
    // another tenant sees none of it and cannot revoke it
    const other = await newTenant();
    expect(((await (await call(other, 'human', '/oauth/grants')).json()) as { grants: unknown[] }).grants).toEqual([]);
    expect((await call(other, 'human', `/oauth/grants/${String(g.id)}`, 'DELETE')).status).toBe(404);
    expect((await call(tenantId, 'human', `/oauth/grants/${randomUUID()}`, 'DELETE')).status).toBe(404);
    expect((await call(tenantId, 'human', '/oauth/grants/not-a-uuid', 'DELETE')).status).toBe(422);
    const del = await call(tenantId, 'human', `/oauth/grants/${String(g.id)}`, 'DELETE');
    expect(del.status).toBe(200);
    const revoked = (await del.json()) as { id: string; revoked_at: string };
    expect(revoked.id).toBe(g.id);
    expect(await provider.caller(t.access_token)).toBeUndefined();
    expect((await token({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh_token })).body.error).toBe('invalid_grant');
    const after = (await (await call(tenantId, 'human', '/oauth/grants')).json()) as { grants: Array<Record<string, unknown>> };
    expect(after.grants[0].revoked_at).toBe(revoked.revoked_at);
  });

  it.each([
    ['tenant_key', 'an API key cannot'],
    ['agent_key', 'an agent-scoped API key cannot'],
    ['oauth', "an MCP client's OAuth token cannot"],
    ['key_session', 'a session token made from an API key cannot'],
  ])('%s: 403 on list and revoke, saying who may', async (caller, says) => {
    const tenantId = await newTenant();
    for (const [path, method] of [['/oauth/grants', 'GET'], [`/oauth/grants/${randomUUID()}`, 'DELETE']]) {
      const r = await call(tenantId, caller, path, method);
      expect(r.status).toBe(403);
      const detail = String(((await r.json()) as { detail: string }).detail);
      expect(detail).toContain('signed-in human');
      expect(detail).toContain(says);
    }
  });
});

describe('grant lifetime', () => {
  it('no token outlives the grant, and a refresh after its end is invalid_grant (consent again)', async () => {
    const tenantId = await newTenant();
    const short = makeProvider(RESOURCE, 1800); // a 30-minute grant: shorter than the 1 h access token
    const { clientId, code } = await consented(tenantId, { p: short });
    const t = await short.exchangeAuthorizationCode({ client_id: clientId, redirect_uris: [CB] }, code, undefined, CB);
    expect(t.expires_in).toBeLessThanOrEqual(1800);
    clock = new Date(Date.now() + 1801_000);
    expect(await short.caller(t.access_token)).toBeUndefined();
    await expect(short.exchangeRefreshToken({ client_id: clientId, redirect_uris: [CB] }, t.refresh_token!)).rejects.toThrow('the grant expired; the client must ask for consent again');
  });
});

describe('refresh', () => {
  it('a refused refresh (scope) leaves the refresh token usable, and the grant alive', async () => {
    const tenantId = await newTenant();
    const t = await tokens(tenantId);
    const bad = await token({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh_token, scope: 'mcp:tools offline_access' });
    expect(bad.body.error).toBe('invalid_scope');
    const badTarget = await token({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh_token, resource: 'https://other.example/mcp' });
    expect(badTarget.status).toBe(400);
    const ok = await token({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh_token });
    expect(ok.status).toBe(200);
    expect(await provider.caller(ok.body.access_token)).toBeDefined();
    // a replay of the consumed token still revokes the family
    const replay = await token({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh_token });
    expect(replay.body.error_description).toContain('already used');
    expect(await provider.caller(ok.body.access_token)).toBeUndefined();
  });
});

describe('redirect_uri and audience', () => {
  it('the token request must carry redirect_uri when the authorization request did', async () => {
    const tenantId = await newTenant();
    const { clientId, code } = await consented(tenantId);
    const r = await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_grant');
    expect(r.body.error_description).toContain('redirect_uri is required');
  });

  it('without redirect_uri at authorize (one registered URI), the token request may omit it', async () => {
    const tenantId = await newTenant();
    const { clientId, code } = await consented(tenantId, { sendRedirect: false });
    expect((await token({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier })).status).toBe(200);
  });

  it('a token minted for another resource is refused at use (and cannot be refreshed here)', async () => {
    const tenantId = await newTenant();
    const t = await tokens(tenantId);
    const elsewhere = makeProvider('https://other.example/api/mcp/server');
    expect(await elsewhere.caller(t.access_token)).toBeUndefined();
    await expect(elsewhere.exchangeRefreshToken({ client_id: t.clientId, redirect_uris: [CB] }, t.refresh_token)).rejects.toThrow('another resource');
    expect(await provider.caller(t.access_token)).toBeDefined();
  });
});

describe('no open redirect', () => {
  it('an error for a dynamically registered client is a 400, never a 302 to its redirect URI', async () => {
    const reg = await register({ redirect_uris: ['https://evil.example/phish'], token_endpoint_auth_method: 'none' });
    const r = await authorize({ client_id: String(reg.body.client_id), response_type: 'code', code_challenge: 'x', code_challenge_method: 'plain' });
    expect(r.status).toBe(400);
    expect(r.headers.get('location')).toBeNull();
    expect(((await r.json()) as { error: string }).error).toBe('invalid_request');
    const scope = await authorize({ client_id: String(reg.body.client_id), response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', scope: 'admin' });
    expect(scope.status).toBe(400);
    expect(((await scope.json()) as { error: string }).error).toBe('invalid_scope');
  });
});

describe('key rotation', () => {
  it('rotating the tenant key revokes every grant of the tenant (default), not another tenant’s', async () => {
    const tenantId = await newTenant();
    const other = await newTenant();
    const [a, b, c] = [await tokens(tenantId), await tokens(tenantId), await tokens(other)];
    expect((await call(tenantId, 'tenant_key', '/api-keys/rotate', 'POST')).status).toBe(200);
    expect(await provider.caller(a.access_token)).toBeUndefined();
    expect(await provider.caller(b.access_token)).toBeUndefined();
    expect((await token({ grant_type: 'refresh_token', client_id: a.clientId, refresh_token: a.refresh_token })).body.error).toBe('invalid_grant');
    expect(await provider.caller(c.access_token)).toBeDefined();
  });

  it('with oauth_grants_end_on_key_rotation false, the grants outlive a rotation', async () => {
    const tenantId = await newTenant({ oauth_grants_end_on_key_rotation: false });
    const a = await tokens(tenantId);
    expect((await call(tenantId, 'tenant_key', '/api-keys/rotate', 'POST')).status).toBe(200);
    expect(await provider.caller(a.access_token)).toBeDefined();
  });
});

describe('the user who consented', () => {
  it('a grant goes with the user who consented: its tokens stop, its refresh is invalid_grant, the list no longer shows it', async () => {
    const tenantId = await newTenant();
    const t = await tokens(tenantId);
    const second = randomUUID(); // another user of the tenant, whose grant stays
    await db.insertInto('users').values({ id: second, tenant_id: tenantId, email: `second-${second}@example.com`, password_hash: null, github_id: null, is_admin: false, email_verified: true }).execute();
    const reg = await register({ redirect_uris: [CB], token_endpoint_auth_method: 'none' });
    const a = await authorize({ client_id: String(reg.body.client_id), response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', redirect_uri: CB });
    const { redirect_to } = await provider.decide(String(a.headers.get('location')).split('/').pop()!, { tenantId, userId: second, email: 'second@example.com' }, { approve: true, agentName: 'bot2' });
    const kept = await token({ grant_type: 'authorization_code', client_id: String(reg.body.client_id), code: String(new URL(redirect_to).searchParams.get('code')), code_verifier: verifier, redirect_uri: CB });
    expect(await provider.caller(t.access_token)).toBeDefined();
    await db.deleteFrom('users').where('id', '=', owners.get(tenantId)!).execute();
    expect(await provider.caller(t.access_token)).toBeUndefined();
    expect((await token({ grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh_token })).body.error).toBe('invalid_grant');
    const list = (await (await call(tenantId, 'human', '/oauth/grants')).json()) as { grants: Array<{ client_id: string }> };
    expect(list.grants.map((g) => g.client_id)).toEqual([String(reg.body.client_id)]);
    expect(await provider.caller(kept.body.access_token)).toBeDefined();
  });

  it('a consent by someone who is not a user of the tenant makes no grant (403), and the code is never issued', async () => {
    const tenantId = await newTenant();
    const other = await newTenant();
    const reg = await register({ redirect_uris: [CB], token_endpoint_auth_method: 'none' });
    for (const userId of [owners.get(other)!, randomUUID()]) {
      const a = await authorize({ client_id: String(reg.body.client_id), response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', redirect_uri: CB });
      const id = String(a.headers.get('location')).split('/').pop()!;
      await expect(provider.decide(id, { tenantId, userId, email: 'someone@example.com' }, { approve: true, agentName: 'bot' })).rejects.toThrow('no longer a user of this tenant');
    }
    expect(await db.selectFrom('oauth_grants').select('id').where('client_id', '=', String(reg.body.client_id)).execute()).toEqual([]);
  });
});

describe('dynamic registration', () => {
  it.each([
    [{ redirect_uris: ['http://evil.example/cb'] }, 'loopback'],
    [{ redirect_uris: ['ms-msdt:/id PCWDiagnostic'] }, 'reverse-DNS'],
    [{ redirect_uris: ['https://a.example/cb'], client_name: 'n'.repeat(101) }, 'client_name'],
    [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }, 'at most 10'],
    [{ redirect_uris: ['https://a.example/cb'], contacts: Array.from({ length: 6 }, (_, i) => `c${i}@a.example`) }, 'at most 5 contacts'],
    [{ redirect_uris: ['https://a.example/cb'], client_uri: `https://a.example/${'x'.repeat(9000)}` }, '8192 bytes'],
  ])('refuses %#: 400 invalid_client_metadata, nothing stored', async (body, says) => {
    const before = await db.selectFrom('oauth_clients').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const r = await register({ ...body, token_endpoint_auth_method: 'none' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_client_metadata');
    expect(String(r.body.error_description)).toContain(says);
    const after = await db.selectFrom('oauth_clients').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('drops jwks and software_statement, keeps the rest; accepts loopback http and private-use schemes', async () => {
    const r = await register({ redirect_uris: ['http://127.0.0.1:1234/cb', 'com.example.app:/cb'], token_endpoint_auth_method: 'none', jwks: { keys: [{ k: 'x'.repeat(1000) }] }, software_statement: 'ey' });
    expect(r.status).toBe(201);
    expect(r.body.jwks).toBeUndefined();
    expect(r.body.software_statement).toBeUndefined();
    const stored = await new OauthRepository(db).client(String(r.body.client_id));
    expect(stored?.jwks).toBeUndefined();
    expect(stored?.redirect_uris).toEqual(['http://127.0.0.1:1234/cb', 'com.example.app:/cb']);
  });
});

describe('purge', () => {
  it('deletes expired requests, codes and tokens and week-old unused clients; keeps what a replay check or a grant needs', async () => {
    const tenantId = await newTenant();
    const live = await tokens(tenantId);
    const ago = (ms: number) => new Date(Date.now() - ms);
    const day = 86400_000;
    const repo = new OauthRepository(db);
    const hex = () => createHash('sha256').update(randomUUID()).digest('hex');
    // an old client nobody granted, and an old client with a grant
    const [unused, granted] = [`purge-${randomUUID()}`, `purge-${randomUUID()}`];
    await db.insertInto('oauth_clients').values([
      { client_id: unused, metadata: JSON.stringify({ redirect_uris: [CB] }) as never, created_at: ago(8 * day) },
      { client_id: granted, metadata: JSON.stringify({ redirect_uris: [CB] }) as never, created_at: ago(8 * day) },
    ]).execute();
    const grantId = randomUUID();
    const ended = randomUUID();
    const by = { granted_by: 'x', granted_by_user_id: owners.get(tenantId)! };
    expect(await repo.insertGrant({ id: grantId, tenant_id: tenantId, client_id: granted, agent_name: 'a', scopes: ['mcp:tools'], resource: RESOURCE, ...by, expires_at: new Date(Date.now() + day) })).toBe(true);
    expect(await repo.insertGrant({ id: ended, tenant_id: tenantId, client_id: granted, agent_name: 'a', scopes: ['mcp:tools'], resource: RESOURCE, ...by, expires_at: new Date(Date.now() + day) })).toBe(true);
    await db.updateTable('oauth_grants').set({ revoked_at: ago(2 * day) }).where('id', '=', ended).execute();
    const t = { expired: hex(), revokedAccess: hex(), consumedRefresh: hex(), endedRefresh: hex() };
    await db.insertInto('oauth_tokens').values([
      { token_hash: t.expired, kind: 'access', grant_id: grantId, expires_at: ago(2 * day) },
      { token_hash: t.revokedAccess, kind: 'access', grant_id: grantId, expires_at: new Date(Date.now() + day), revoked_at: ago(2 * day) },
      { token_hash: t.consumedRefresh, kind: 'refresh', grant_id: grantId, expires_at: new Date(Date.now() + day), revoked_at: ago(2 * day) },
      { token_hash: t.endedRefresh, kind: 'refresh', grant_id: ended, expires_at: new Date(Date.now() + day), revoked_at: ago(2 * day) },
    ]).execute();
    const reqId = `purge-${randomUUID()}`;
    await db.insertInto('oauth_authorization_requests').values({ id: reqId, client_id: granted, redirect_uri: CB, state: null, scopes: ['mcp:tools'], code_challenge: 'c', resource: RESOURCE, expires_at: ago(1000) }).execute();
    const codeHash = hex();
    await repo.insertCode({ code_hash: codeHash, grant_id: grantId, client_id: granted, redirect_uri: CB, redirect_uri_sent: true, code_challenge: 'c', expires_at: ago(1000) });

    const counts = await purgeOauth(db);
    expect(counts).toBeDefined();
    const tokenLeft = async (h: string) => Boolean(await db.selectFrom('oauth_tokens').select('token_hash').where('token_hash', '=', h).executeTakeFirst());
    expect(await tokenLeft(t.expired)).toBe(false);
    expect(await tokenLeft(t.revokedAccess)).toBe(false);
    expect(await tokenLeft(t.endedRefresh)).toBe(false);
    expect(await tokenLeft(t.consumedRefresh)).toBe(true); // its replay must still revoke the live grant
    expect(await provider.caller(live.access_token)).toBeDefined();
    expect(await repo.client(unused)).toBeUndefined();
    expect(await repo.client(granted)).toBeDefined();
    expect(await repo.request(reqId)).toBeUndefined();
    expect(await repo.code(codeHash)).toBeUndefined();
    expect(await repo.grant(ended)).toBeDefined(); // grants stay listed
  });

  it('one replica at a time: a purge that cannot take the lock skips the round', async () => {
    await db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext('agw:oauth-purge'))`.execute(tx);
      expect(await purgeOauth(db)).toBeUndefined();
    });
  });
});
