/**
 * The edge rules as the gateway's app composes them (JSON parser, input guard, 405 before and after
 * authentication, the one error mapping), on a small app with stand-in routes, over real HTTP:
 * every bad input is a 4xx with a precise detail, never a 500.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import net from 'node:net';
import { AppError, AuthenticationError, DependencyUnavailableError, RateLimitError, createDb, createLogger, createRedis } from '@agw/shared';
import { sql } from 'kysely';
import express, { Router } from 'express';
import { errorHandler } from './error-handler';
import { MAX_JSON_DEPTH, inputGuard } from './input-guard';
import { methodNotAllowedWithoutCredentials, notFoundOrMethodNotAllowed } from './not-found';

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  const api = Router();
  api.use(express.json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] }));
  api.use(inputGuard);
  api.post('/auth/signup', (req, res) => void res.status(201).json({ ok: true, body: req.body }));
  api.get('/health', (_req, res) => void res.json({ status: 'healthy' }));
  api.use(methodNotAllowedWithoutCredentials(api));
  api.use((req, _res, next) => {
    if (req.header('x-api-key') !== 'k') throw new AuthenticationError('Invalid API key');
    next();
  });
  const tenant = Router();
  tenant.post('/mcp/tools/call', (req, res) => void res.json({ status: 'allowed', body: req.body }));
  tenant.get('/approvals', (_req, res) => void res.json({ pending: [] }));
  tenant.get('/credentials/:tool_id/status', (req, res) => void res.json({ tool_id: req.params.tool_id }));
  tenant.delete('/credentials/:tool_id/:name', (_req, res) => void res.json({ status: 'deleted' }));
  tenant.get('/limited', () => {
    throw new RateLimitError('Too many', 'Too many', 7);
  });
  // stores that cannot be reached, with the real drivers: nothing listens on deadPort
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const deadPort = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const db = createDb(`postgres://postgres@127.0.0.1:${deadPort}/none`, { max: 1 });
  const redis = createRedis(`redis://127.0.0.1:${deadPort}/0`);
  closers.push(() => db.destroy(), () => redis.disconnect());
  tenant.get('/pg-down', async (_req, res, next) => {
    try {
      res.json(await sql`SELECT 1`.execute(db));
    } catch (e) {
      next(e);
    }
  });
  tenant.get('/redis-down', async (_req, res, next) => {
    try {
      res.json(await redis.get('x'));
    } catch (e) {
      next(e);
    }
  });
  tenant.get('/peer-store-down', () => {
    // as a gRPC client rebuilds it (packages/shared/src/grpc.ts)
    throw new AppError('store_unavailable', 'Postgres is unreachable (audit service)');
  });
  tenant.get('/peer-down', () => {
    throw new DependencyUnavailableError('audit service is unreachable');
  });
  api.use(tenant);
  api.use(notFoundOrMethodNotAllowed(api));
  app.use('/api', api);
  app.use(errorHandler(createLogger('test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
const closers: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of closers) await c();
  await new Promise((r) => server.close(r));
});

async function send(method: string, path: string, o: { body?: unknown; raw?: string | Buffer; key?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.key) headers['x-api-key'] = o.key;
  if (o.body !== undefined || o.raw !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(base + path, { method, headers, body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;

describe('a dependency that cannot be reached', () => {
  it('is a 503 naming the store (the gateway\'s own Postgres or Redis, or one behind a service) with Retry-After, never a 500', async () => {
    for (const [path, detail] of [
      ['/pg-down', 'Service unavailable: Postgres is unreachable (gateway); retry later'],
      ['/redis-down', 'Service unavailable: Redis is unreachable (gateway); retry later'],
      ['/peer-store-down', 'Service unavailable: Postgres is unreachable (audit service); retry later'],
    ]) {
      const r = await send('GET', path, { key: 'k' });
      expect([path, r.status, r.body]).toEqual([path, 503, { detail }]);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
  it('is a 502 for a peer service, with Retry-After', async () => {
    const r = await send('GET', '/peer-down', { key: 'k' });
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ detail: 'audit service is unreachable' });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('edge rules', () => {
  it('answers a NUL or a lone surrogate in a body, query or path string with 422 at its loc, with or without a key', async () => {
    const body = await send('POST', '/mcp/tools/call', { key: 'k', body: { tool: 'a\u0000b' } });
    expect([body.status, body.body.detail[0].loc, body.body.detail[0].type]).toEqual([422, ['body', 'tool'], 'string_invalid']);
    const signup = await send('POST', '/auth/signup', { body: { tenant_name: 'x\uDC00' } });
    expect([signup.status, signup.body.detail[0].loc]).toEqual([422, ['body', 'tenant_name']]);
    const query = await send('GET', '/approvals?event=%00', { key: 'k' });
    expect([query.status, query.body.detail[0].loc]).toEqual([422, ['query', 'event']]);
    // a surrogate spelled in UTF-8 is invalid percent-encoding: the path refuses it, a query value decodes it as U+FFFD
    const surrogatePath = await send('GET', '/credentials/%ED%A0%80/status', { key: 'k' });
    expect([surrogatePath.status, surrogatePath.body.detail[0].loc]).toEqual([422, ['path']]);
    expect((await send('GET', '/approvals?event=%ED%A0%80', { key: 'k' })).status).toBe(200);
    const path = await send('GET', '/credentials/%00/status', { key: 'k' });
    expect([path.status, path.body.detail[0].loc]).toEqual([422, ['path']]);
    const badPct = await send('GET', '/credentials/%E0%A4%A/status', { key: 'k' });
    expect([badPct.status, badPct.body.detail[0].type]).toEqual([422, 'path_invalid']);
    // before authentication: an unauthenticated probe gets the same 422, never a 500
    expect((await send('DELETE', '/credentials/%00/x')).status).toBe(422);
  });

  it('limits JSON bodies to 32 levels, with the loc of the first too-deep value', async () => {
    const ok = await send('POST', '/mcp/tools/call', { key: 'k', raw: `{"params":${nestedText(MAX_JSON_DEPTH - 1)}}` });
    expect(ok.status).toBe(200);
    const deep = await send('POST', '/mcp/tools/call', { key: 'k', raw: `{"params":${nestedText(MAX_JSON_DEPTH)}}` });
    expect(deep.status).toBe(422);
    expect(deep.body.detail[0]).toMatchObject({ type: 'too_deep', msg: 'nested deeper than 32 levels' });
    expect(deep.body.detail[0].loc).toEqual(['body', 'params', ...Array(MAX_JSON_DEPTH - 1).fill('a')]);
    // 20,000 levels (a 120 KB body) used to overflow the stack of the validators
    const hostile = await send('POST', '/auth/signup', { raw: nestedText(20_000) });
    expect([hostile.status, hostile.body.detail[0].type]).toEqual([422, 'too_deep']);
    const arrays = await send('POST', '/mcp/tools/call', { key: 'k', raw: `${'['.repeat(5000)}${']'.repeat(5000)}` });
    expect([arrays.status, arrays.body.detail[0].type]).toEqual([422, 'too_deep']);
  });

  it('refuses __proto__ keys but takes constructor as a plain key', async () => {
    const proto = await send('POST', '/mcp/tools/call', { key: 'k', raw: '{"params":{"__proto__":{"admin":true}}}' });
    expect([proto.status, proto.body.detail[0].loc]).toEqual([422, ['body', 'params', '__proto__']]);
    const ctor = await send('POST', '/mcp/tools/call', { key: 'k', raw: '{"params":{"constructor":{"prototype":{"x":1}}}}' });
    expect(ctor.status).toBe(200);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('answers bodies that do not parse or inflate with 4xx: malformed JSON, bad gzip/deflate, unknown encodings, too large', async () => {
    const malformed = await send('POST', '/mcp/tools/call', { key: 'k', raw: '{"a":' });
    expect([malformed.status, malformed.body.detail[0].type]).toEqual([422, 'json_invalid']);
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const r = await send('POST', '/mcp/tools/call', { key: 'k', raw: 'not compressed', headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
      expect([encoding, r.status, r.body.detail[0].loc, r.body.detail[0].type]).toEqual([encoding, 422, ['body'], 'encoding_invalid']);
    }
    const gz = await send('POST', '/mcp/tools/call', { key: 'k', raw: gzipSync('{"tool":"t"}'), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect([gz.status, gz.body.body]).toEqual([200, { tool: 't' }]);
    const unknown = await send('POST', '/mcp/tools/call', { key: 'k', raw: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'weird' } });
    expect(unknown.status).toBe(415);
    const large = await send('POST', '/mcp/tools/call', { key: 'k', body: { s: 'x'.repeat(1_100_000) } });
    expect(large.status).toBe(413);
  });

  it('answers a wrong method on a known path with 405, Allow and {"detail":"Method Not Allowed"}; unknown paths with 404', async () => {
    const wrong = await send('GET', '/mcp/tools/call', { key: 'k' });
    expect([wrong.status, wrong.headers.get('allow'), wrong.body]).toEqual([405, 'POST', { detail: 'Method Not Allowed' }]);
    const put = await send('PUT', '/approvals', { key: 'k' });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const post = await send('POST', '/credentials/x/status', { key: 'k' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'DELETE, GET, HEAD']);
    expect((await send('GET', '/no/such/route', { key: 'k' })).status).toBe(404);
  });

  it('answers a wrong method without credentials with 405 before authentication (public routes included), the right method with 401', async () => {
    const signup = await send('GET', '/auth/signup');
    expect([signup.status, signup.headers.get('allow'), signup.body]).toEqual([405, 'POST', { detail: 'Method Not Allowed' }]);
    expect((await send('PUT', '/health')).headers.get('allow')).toBe('GET, HEAD');
    expect((await send('GET', '/mcp/tools/call')).status).toBe(405);
    expect((await send('POST', '/mcp/tools/call', { body: {} })).status).toBe(401);
    expect((await send('GET', '/no/such/route')).status).toBe(401);
    // with a (wrong) key, authentication comes first, as before
    expect((await send('GET', '/mcp/tools/call', { key: 'wrong' })).status).toBe(401);
  });

  it('sends Retry-After (seconds) with a 429', async () => {
    const r = await send('GET', '/limited', { key: 'k' });
    expect([r.status, r.headers.get('retry-after')]).toEqual([429, '7']);
  });
});
