/**
 * GitHub OAuth login through the real gateway (built in-process on the real Postgres, Redis and NATS)
 * against a local GitHub test double speaking GitHub's OAuth and REST endpoints over a real socket.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { type StartedService, TEST_DATABASE_URL, createLogger, createMetricsRegistry, migrateToLatest, startService } from '@agw/shared';
import { type GatewayConfig, loadGatewayConfig } from '../src/config';
import { type Gateway, gatewayService } from '../src/gateway';
import { errorHandler } from '../src/http/error-handler';
import { githubRoutes } from '../src/http/routes/github.routes';
const githubId = Math.floor(Math.random() * 1e9);
const login = `octo-${randomUUID().slice(0, 8)}`;
const email = `${login}@users.example.com`;
const seen: { tokenRequests: URLSearchParams[]; authHeaders: string[] } = { tokenRequests: [], authHeaders: [] };

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

// The GitHub double: /login/oauth/authorize, /login/oauth/access_token, /user, /user/emails.
const github = http.createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  if (u.pathname === '/login/oauth/authorize') {
    const back = new URL(u.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', 'the-code');
    back.searchParams.set('state', u.searchParams.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
    return;
  }
  if (u.pathname === '/login/oauth/access_token' && req.method === 'POST') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.tokenRequests.push(form);
      if (form.get('code') !== 'the-code' || form.get('client_secret') !== 'test-secret') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad_verification_code' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'gho_test', token_type: 'bearer', scope: 'read:user,user:email' }));
    });
    return;
  }
  seen.authHeaders.push(String(req.headers.authorization));
  if (u.pathname === '/user') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: githubId, login, name: 'Octo Cat' }));
    return;
  }
  if (u.pathname === '/user/emails') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify([
        { email: `unverified-${email}`, primary: false, verified: false },
        { email, primary: true, verified: true },
      ]),
    );
    return;
  }
  res.writeHead(404).end();
});

let gateway: StartedService<GatewayConfig, Gateway>;
let base: string;

beforeAll(async () => {
  await migrateToLatest(TEST_DATABASE_URL);
  const gh = `http://127.0.0.1:${await listen(github)}`;
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  base = `http://127.0.0.1:${port}/api`;
  const config = loadGatewayConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    AGW_STREAM_PREFIX: 'TEST',
    GATEWAY_PORT: String(port),
    PUBLIC_BASE_URL: base,
    GITHUB_CLIENT_ID: 'test-client',
    GITHUB_CLIENT_SECRET: 'test-secret',
    GITHUB_AUTHORIZATION_URL: `${gh}/login/oauth/authorize`,
    GITHUB_TOKEN_URL: `${gh}/login/oauth/access_token`,
    GITHUB_USER_PROFILE_URL: `${gh}/user`,
    GITHUB_USER_EMAIL_URL: `${gh}/user/emails`,
  });
  // the gateway's own definition, as main.ts runs it: stores, clients, the HTTP edge on GATEWAY_PORT
  gateway = await startService(gatewayService(), { config, logger: createLogger('test', 'silent'), registry: createMetricsRegistry('test') });
});
afterAll(async () => {
  await gateway?.close();
  await new Promise((r) => github.close(r));
});

async function loginOnce(): Promise<{ status: number; body: any }> {
  const start = await fetch(`${base}/auth/github`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get('location')!);
  expect(authorize.pathname).toBe('/login/oauth/authorize');
  expect(authorize.searchParams.get('client_id')).toBe('test-client');
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${base}/auth/github/callback`);
  expect(authorize.searchParams.get('state')).toBeTruthy();
  const back = await fetch(authorize, { redirect: 'manual' });
  const callback = back.headers.get('location')!;
  const res = await fetch(callback);
  return { status: res.status, body: await res.json() };
}

it('signs up a new tenant from a GitHub identity and returns a session token', async () => {
  const r = await loginOnce();
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ token_type: 'bearer', new_account: true, tenant_id: expect.any(String) });
  expect(seen.authHeaders.every((h) => h === 'Bearer gho_test')).toBe(true);
  const me = await fetch(`${base}/auth/me`, { headers: { authorization: `Bearer ${r.body.access_token}` } }).then((x) => x.json());
  expect(me).toMatchObject({ tenant_id: r.body.tenant_id, email, auth_method: 'jwt', tenant_slug: login });
  // the new owner gets an API key with the session token
  const key = await fetch(`${base}/api-keys/rotate`, { method: 'POST', headers: { authorization: `Bearer ${r.body.access_token}` } }).then((x) => x.json() as Promise<{ api_key: string }>);
  expect(key.api_key).toMatch(/^agw_/);
});

it('logs the same GitHub user into the same tenant the next time', async () => {
  const first = await loginOnce();
  const again = await loginOnce();
  expect(again.body.new_account).toBe(false);
  expect(again.body.tenant_id).toBe(first.body.tenant_id);
});

it('refuses a forged state and a callback without a valid code (401)', async () => {
  const forged = await fetch(`${base}/auth/github/callback?code=the-code&state=forged`);
  expect(forged.status).toBe(401);
  const start = await fetch(`${base}/auth/github`, { redirect: 'manual' });
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  const badCode = await fetch(`${base}/auth/github/callback?code=wrong&state=${encodeURIComponent(state)}`);
  expect(badCode.status).toBe(401);
  expect(((await badCode.json()) as { detail: string }).detail).toMatch(/GitHub login/);
});

it('answers 404 with a clear detail when GitHub login is not configured', async () => {
  const app = express();
  app.use(githubRoutes({ config: { githubClientId: undefined }, logger: createLogger('t', 'silent') } as never));
  app.use(errorHandler(createLogger('t', 'silent')));
  const s = http.createServer(app);
  const port = await listen(s);
  const r = await fetch(`http://127.0.0.1:${port}/auth/github`);
  expect(r.status).toBe(404);
  expect(((await r.json()) as { detail: string }).detail).toMatch(/not configured/);
  await new Promise((res) => s.close(res));
});
