/**
 * The console's refresh cookie through the API (docs/console.md, "The session token"): set by sign-in,
 * rotated by each refresh, a reused one revokes its whole session, sign-out and key rotation end it, and a
 * cross-site Origin is refused.
 */
import { type Tenant, api, newTenant } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

const ORIGIN = new URL(E2E_BASE_URL).origin;
const cookieOf = (res: Response) => /agw_refresh=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
const refresh = (cookie: string | undefined, headers: Record<string, string> = {}) =>
  fetch(`${E2E_BASE_URL}/auth/refresh`, { method: 'POST', headers: { ...(cookie ? { cookie: `agw_refresh=${cookie}` } : {}), origin: ORIGIN, ...headers } });

async function signIn(t: Tenant) {
  const res = await fetch(`${E2E_BASE_URL}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: t.email, password: t.password }) });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie')!;
  expect(setCookie).toMatch(/HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Strict/i);
  expect(setCookie).toMatch(/Path=\/api\/auth/);
  return cookieOf(res)!;
}

test('sign-in sets the cookie; a refresh rotates it; the old one used again revokes the session', async () => {
  const t = await newTenant('Console refresh');
  const first = await signIn(t);
  const r1 = await refresh(first);
  expect(r1.status).toBe(200);
  const { access_token } = (await r1.json()) as { access_token: string };
  expect((await api('GET', '/auth/me', { token: access_token })).body.email).toBe(t.email);
  const second = cookieOf(r1)!;
  expect(second).not.toBe(first);
  expect((await refresh(first)).status).toBe(401); // reuse: someone else holds a copy
  expect((await refresh(second)).status).toBe(401); // ... so the whole session is gone
  expect((await refresh(undefined)).status).toBe(401);
});

test('sign-out and a rotated API key end the session; another origin is refused', async () => {
  const t = await newTenant('Console refresh end');
  const a = await signIn(t);
  const out = await fetch(`${E2E_BASE_URL}/auth/logout`, { method: 'POST', headers: { cookie: `agw_refresh=${a}`, origin: ORIGIN } });
  expect(out.status).toBe(200);
  expect(out.headers.get('set-cookie')).toMatch(/agw_refresh=;/);
  expect((await refresh(a)).status).toBe(401);

  const b = await signIn(t);
  expect((await refresh(b, { origin: 'https://evil.example.com' })).status).toBe(403);
  expect((await api('POST', '/api-keys/rotate', { key: t.apiKey })).status).toBe(200);
  expect((await refresh(b)).status).toBe(401);
});
