/**
 * Single sign-on with a tenant's OpenID provider (docs/auth.md, "Single sign-on (OIDC)") through the
 * running fleet, against a real provider: panva's oidc-provider on loopback (support/oidc-idp.mjs), driven
 * by an HTTP user agent with a cookie jar that follows the redirects (support/sso.ts).
 * - the authorization code flow with PKCE: a member created just in time with the role its group maps to,
 *   signed in to the console (the refresh cookie resumes the session); a second sign-in is the same member;
 * - an unverified address and an address outside the bound domains are refused;
 * - a replayed callback (state used) and a callback in another browser are refused;
 * - a wrong issuer (an authorization response of another provider: mix-up) and a code issued to another
 *   client (audience) are refused;
 * - require_sso turns the password sign-in off (403); the tenant key stays the break-glass;
 * - the configuration: the secret never shown, its change audited, another tenant neither reads it nor
 *   binds its domain.
 */
import { randomUUID } from 'node:crypto';
import { type Tenant, api, newTenant } from './support/api';
import { E2E_BASE_URL, E2E_OFFSET } from './support/e2e-env';
import { Browser, type Idp, loginFormAction, startIdp } from './support/sso';

jest.setTimeout(120_000);

const IDP_PORT = 15101 + ((E2E_OFFSET / 100) % 10) * 3;
const CALLBACK = `${E2E_BASE_URL}/auth/sso/callback`;
const CONSOLE = `${new URL(E2E_BASE_URL).origin}/`;
const SECRET = `sso-secret-${randomUUID()}`;

let idp: Idp;
let idp2: Idp;
let t: Tenant;
let domain: string;

const config = (over: Record<string, unknown> = {}) => ({
  issuer: idp.issuer,
  client_id: 'agw',
  client_secret: SECRET,
  domains: [domain],
  default_role: 'viewer',
  groups_claim: 'groups',
  group_roles: { 'agw-approvers': 'approver', 'agw-admins': 'admin' },
  ...over,
});

/** Starts a sign-in at the gateway and follows it to the IdP's login form. */
async function toLoginForm(b: Browser, hint: string, rewrite?: (u: URL) => void) {
  const start = await b.request('GET', `${E2E_BASE_URL}/auth/sso/start?tenant=${encodeURIComponent(hint)}`);
  expect(start.status).toBe(302);
  const authz = new URL(start.headers.get('location')!);
  rewrite?.(authz);
  const page = await b.follow('GET', authz.href);
  expect(page.res.status).toBe(200);
  const last = page.hops.at(-1)!.url;
  return { authz, action: loginFormAction(page.body, last) };
}

/** Signs in at the IdP and stops at the gateway's callback (not requested). */
async function toCallback(b: Browser, hint: string, user: { email: string; groups?: string; verified?: boolean }, rewrite?: (u: URL) => void) {
  const { authz, action } = await toLoginForm(b, hint, rewrite);
  const done = await b.follow('POST', action, {
    form: { email: user.email, groups: user.groups ?? '', ...(user.verified === false ? {} : { email_verified: 'true' }) },
    stop: (loc) => loc.startsWith(CALLBACK),
  });
  expect(done.next).toBeDefined();
  return { authz, callback: done.next! };
}

/** The console session the refresh cookie resumes (what the console does on load). */
async function consoleSession(b: Browser): Promise<{ status: number; body: any }> {
  const r = await b.request('POST', `${E2E_BASE_URL}/auth/refresh`, { headers: { origin: new URL(E2E_BASE_URL).origin } });
  const body = (await r.json()) as any;
  if (r.status !== 200) return { status: r.status, body };
  const me = await api('GET', '/auth/me', { token: body.access_token });
  return { status: me.status, body: me.body };
}

beforeAll(async () => {
  const clients = [
    { client_id: 'agw', client_secret: SECRET, redirect_uris: [CALLBACK] },
    { client_id: 'other-app', client_secret: `other-${SECRET}`, redirect_uris: [CALLBACK] },
  ];
  idp = await startIdp(IDP_PORT, clients);
  idp2 = await startIdp(IDP_PORT + 1, clients);
  t = await newTenant('SSO Corp');
  domain = `${randomUUID().slice(0, 8)}.acme.test`;
  const put = await api('PUT', '/settings/sso', { key: t.apiKey, body: config() });
  expect(put.status).toBe(200);
});

afterAll(async () => {
  await idp?.stop();
  await idp2?.stop();
});

describe('the configuration', () => {
  it('is shown without its secret, names the redirect URI, and its change is a control_plane audit record', async () => {
    const r = await api('GET', '/settings/sso', { key: t.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ issuer: idp.issuer, client_id: 'agw', client_secret_set: true, domains: [domain], default_role: 'viewer', redirect_uri: CALLBACK, require_sso: false });
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
    const log = await api('GET', '/audit/log?limit=50', { key: t.apiKey });
    const rec = log.body.records.find((x: any) => x.tool === 'agw.settings.sso');
    expect(rec).toMatchObject({ source: 'control_plane', method: 'create', decision: 'sso_configured' });
    expect(JSON.stringify(log.body)).not.toContain(SECRET);
  });

  it('is refused with a precise 422 for an http issuer off loopback and an owner default role; the first PUT needs the secret', async () => {
    const bad = await api('PUT', '/settings/sso', { key: t.apiKey, body: config({ issuer: 'http://idp.example.com', default_role: 'owner' }) });
    expect(bad.status).toBe(422);
    const where = bad.body.detail.map((d: any) => d.loc.join('.'));
    expect(where).toEqual(expect.arrayContaining(['body.issuer', 'body.default_role']));
    const other = await newTenant('No Secret');
    const noSecret = await api('PUT', '/settings/sso', { key: other.apiKey, body: config({ client_secret: undefined, domains: [`x${domain}`] }) });
    expect(noSecret.status).toBe(409);
    expect(noSecret.body.detail).toMatch(/client_secret is required/);
  });

  it('another tenant neither reads it nor binds its domain', async () => {
    const other = await newTenant('Other');
    const r = await api('GET', '/settings/sso', { key: other.apiKey });
    expect(r.status).toBe(404);
    const steal = await api('PUT', '/settings/sso', { key: other.apiKey, body: config({ domains: [domain] }) });
    expect(steal.status).toBe(409);
    expect(steal.body.detail).toContain(`${domain} is bound to another tenant`);
  });
});

describe('the sign-in', () => {
  it('code flow with PKCE: a member created just in time with its group\'s role, signed in to the console; the next sign-in is the same member', async () => {
    const b = new Browser();
    const email = `alice@${domain}`;
    const { authz, callback } = await toCallback(b, email, { email, groups: 'staff,agw-approvers' });
    expect(authz.origin).toBe(new URL(idp.issuer).origin);
    expect(Object.fromEntries(authz.searchParams)).toMatchObject({ client_id: 'agw', response_type: 'code', code_challenge_method: 'S256', redirect_uri: CALLBACK, login_hint: email });
    expect(authz.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authz.searchParams.get('nonce')).toBeTruthy();
    expect(new URL(callback).searchParams.get('iss')).toBe(idp.issuer);
    const cb = await b.request('GET', callback);
    expect(cb.status).toBe(302);
    expect(cb.headers.get('location')).toBe(CONSOLE);
    const me = await consoleSession(b);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ tenant_id: t.tenantId, email, role: 'approver', auth_method: 'jwt' });
    const members = await api('GET', '/members', { key: t.apiKey });
    expect(members.body.members.find((m: any) => m.email === email)).toMatchObject({ role: 'approver', email_verified: true });

    // a second sign-in (a mapped group of a higher role now): the same member, its role unchanged
    const b2 = new Browser();
    const again = await toCallback(b2, domain, { email, groups: 'agw-admins' });
    expect((await b2.request('GET', again.callback)).status).toBe(302);
    const me2 = await consoleSession(b2);
    expect(me2.body).toMatchObject({ user_id: me.body.user_id, role: 'approver' });

    // no mapped group: the default role; by the tenant's slug
    const b3 = new Browser();
    const bob = `bob@${domain}`;
    const third = await toCallback(b3, t.slug, { email: bob });
    expect((await b3.request('GET', third.callback)).status).toBe(302);
    expect((await consoleSession(b3)).body).toMatchObject({ email: bob, role: 'viewer' });
  });

  it('an unverified address and an address outside the bound domains are refused (403)', async () => {
    const b = new Browser();
    const unverified = await toCallback(b, domain, { email: `carol@${domain}`, verified: false });
    const r = await b.request('GET', unverified.callback);
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ code: 'email_not_verified', detail: expect.stringContaining('email_verified is not true') });
    const b2 = new Browser();
    const outside = await toCallback(b2, domain, { email: 'mallory@elsewhere.test' });
    const r2 = await b2.request('GET', outside.callback);
    expect(r2.status).toBe(403);
    expect(await r2.json()).toMatchObject({ code: 'domain_not_bound' });
    const members = await api('GET', '/members', { key: t.apiKey });
    expect(members.body.members.map((m: any) => m.email)).not.toEqual(expect.arrayContaining([`carol@${domain}`]));
  });

  it('a replayed callback (state used once) and a callback in another browser are refused (400)', async () => {
    const b = new Browser();
    const email = `dave@${domain}`;
    const { callback } = await toCallback(b, email, { email });
    expect((await b.request('GET', callback)).status).toBe(302);
    const replay = await b.request('GET', callback);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ code: 'unknown_state', detail: expect.stringContaining('Unknown or used state') });

    const other = await toCallback(new Browser(), email, { email });
    const stranger = await new Browser().request('GET', other.callback);
    expect(stranger.status).toBe(400);
    expect(await stranger.json()).toMatchObject({ code: 'browser_mismatch' });
  });

  it('a wrong issuer (another provider answers: mix-up) and a code issued to another client (audience) are refused (401)', async () => {
    const b = new Browser();
    const email = `erin@${domain}`;
    // the authorization request sent to a second provider instead: its answer names its own issuer
    const mixup = await toCallback(b, email, { email }, (u) => {
      u.host = new URL(idp2.issuer).host;
    });
    expect(new URL(mixup.callback).searchParams.get('iss')).toBe(idp2.issuer);
    const r = await b.request('GET', mixup.callback);
    expect(r.status).toBe(401);
    const body = (await r.json()) as any;
    expect(body.code).toBe('token_rejected');
    expect(body.detail).toMatch(/iss/);

    // the request made for another client of the same provider: the code is not the gateway's client's
    const b2 = new Browser();
    const aud = await toCallback(b2, email, { email }, (u) => u.searchParams.set('client_id', 'other-app'));
    const r2 = await b2.request('GET', aud.callback);
    expect(r2.status).toBe(401);
    expect(await r2.json()).toMatchObject({ code: 'token_rejected', detail: expect.stringContaining('invalid_grant') });
    const members = await api('GET', '/members', { key: t.apiKey });
    expect(members.body.members.map((m: any) => m.email)).not.toContain(email);
  });

  it('a sign-in for a tenant without SSO is a 404 naming what to give', async () => {
    const r = await fetch(`${E2E_BASE_URL}/auth/sso/start?tenant=nobody@unknown-${randomUUID().slice(0, 6)}.test`, { redirect: 'manual' });
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).detail).toMatch(/No single sign-on is configured/);
  });
});

describe('require_sso', () => {
  it('turns the password sign-in off with a precise 403; SSO and the tenant key still work', async () => {
    expect((await api('POST', '/auth/login', { body: { email: t.email, password: t.password } })).status).toBe(200);
    const on = await api('PUT', '/settings/sso', { key: t.apiKey, body: config({ client_secret: undefined, require_sso: true }) });
    expect(on.status).toBe(200);
    expect(on.body.require_sso).toBe(true);
    const refused = await api('POST', '/auth/login', { body: { email: t.email, password: t.password } });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/^Password sign-in is turned off for this tenant: it requires single sign-on \(require_sso\)/);
    // the secret kept (omitted in the PUT): SSO still signs in
    const b = new Browser();
    const email = `alice@${domain}`;
    const { callback } = await toCallback(b, email, { email });
    expect((await b.request('GET', callback)).status).toBe(302);
    expect((await consoleSession(b)).body).toMatchObject({ email });
    // break-glass: the tenant key opens an owner's session and can turn it off
    const session = await api('POST', '/auth/session', { key: t.apiKey });
    expect(session.status).toBe(200);
    const off = await api('PUT', '/settings/sso', { key: t.apiKey, body: config({ client_secret: undefined, require_sso: false }) });
    expect(off.status).toBe(200);
    expect((await api('POST', '/auth/login', { body: { email: t.email, password: t.password } })).status).toBe(200);
  });
});
