/**
 * The governed call outside express answers every request exactly as express does: one server as the
 * gateway makes it (createLimitedServer, the edge's listener), one express app behind it, the same steps
 * (the real admission, request id, metrics and access log, body reader, input rules, key scope and error
 * handler; authentication, rate limit and the handler stand-ins using the same request and response API).
 * `POST /api/mcp/tools/call` is served by the edge, `POST /api/mcp/tools/call/` (a trailing slash) by express
 * through the same steps: every case is sent to both and the answers compared (status, body, headers).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { AuthenticationError, ConflictError, InputError, RateLimitError, Registry, createLogger } from '@agw/shared';
import express, { type RequestHandler, Router } from 'express';
import { createGatewayMetrics } from '../metrics';
import { observeRequests } from './access-log';
import { Admission } from './admission';
import { errorHandler } from './error-handler';
import { GOVERNED_BODY_LIMIT, governedJsonBody } from './governed-body';
import { EdgeRequest, GOVERNED_URL, governedEdge } from './governed-edge';
import { countInFlight } from './in-flight';
import { inputGuard } from './input-guard';
import { keyScopeGuard } from './key-scope.middleware';
import { requestId } from './request-context';
import { createLimitedServer } from './server-limits';

const registry = new Registry();
const metrics = createGatewayMetrics(registry);
const logger = createLogger('test', 'silent');
const admission = new Admission({ perProcess: 1, perTenant: 0, targetLatencyMs: 0 }, metrics);
let release: () => void = () => undefined;

/** stand-in for authenticate: the header API, an async throw, req.auth and res.locals */
const authenticate: RequestHandler = async (req, res, next) => {
  const key = req.header('X-Api-Key');
  await Promise.resolve();
  if (!key) throw new AuthenticationError('Invalid API key');
  req.auth = { tenantId: 't1', method: 'api_key', isAdmin: false, keyScope: key === 'agent' ? 'agent' : 'tenant', keyHash: 'h' };
  res.locals.rateLimitAllowed = req.header('x-limit') !== 'over';
  next();
};
/** stand-in for the tenant rate limit: an AppError with a detail object and a Retry-After */
const rateLimit: RequestHandler = (_req, res, next) => {
  if (res.locals.rateLimitAllowed === false) throw new RateLimitError('rate limit exceeded', { error: 'rate_limit_exceeded', tenant_id: 't1', rate_limit_rps: 1, rate_limit_burst: 1 });
  next();
};
/** stand-in for the handler: what the steps saw, echoed with res.set/status/json; errors of each kind */
const handler: RequestHandler = async (req, res, next) => {
  const body = req.body as { fail?: string; hold?: boolean; status?: number } | undefined;
  if (body?.hold) await new Promise<void>((r) => (release = r));
  if (body?.fail === 'sync') throw InputError.at(['body', 'fail'], 'sync failure', 'value_error');
  if (body?.fail === 'next') return next(new ConflictError('passed to next'));
  if (body?.fail === 'plain') throw new Error('a bug');
  await Promise.resolve();
  if (body?.fail === 'async') throw new ConflictError('async failure');
  // @ts-expect-error a number on purpose: express's res.set takes one (String(value)) though its types say string; the edge's must answer the same
  res.set('X-Step', 7);
  res.setHeader('Server-Timing', 'x;dur=1.00');
  res.status(body?.status ?? 200).json({ body: req.body, path: req.path.replace(/\/$/, ''), query: { ...req.query }, auth: req.auth, id: req.id.length, route: req.route?.path });
};

const jsonBody = express.json({ limit: GOVERNED_BODY_LIMIT, strict: false, type: ['application/json', 'application/*+json'] });
/** which path served a request (the edge's objects keep their class; express sets its own prototypes) */
const servedBy: RequestHandler = (req, res, next) => {
  res.setHeader('x-served-by', Object.getPrototypeOf(req) === EdgeRequest.prototype ? 'edge' : 'express');
  next();
};
const first = [admission.process, servedBy, requestId, countInFlight(metrics.httpInFlight), observeRequests(metrics, logger)];
const governed = [governedJsonBody(jsonBody), inputGuard, authenticate, rateLimit, admission.tenant, keyScopeGuard];
const onError = errorHandler(logger);

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use('/api/mcp/tools/call', admission.process);
for (const step of first.slice(1)) app.use(step);
app.use('/api', Router().post('/mcp/tools/call', ...governed, handler));
app.use(onError);
const { server, stop } = createLimitedServer(governedEdge(app, [...first, ...governed, handler], onError), { headersTimeoutMs: 5000, requestTimeoutMs: 10000, keepAliveTimeoutMs: 5000, maxConnections: 100, graceMs: 1000 }, logger);
let port = 0;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => stop());

interface Answer {
  status: number;
  body: unknown;
  headers: http.IncomingHttpHeaders;
}

function send(path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null'), headers: res.headers }));
    });
    req.on('error', reject);
    if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body));
    req.end(body);
  });
}

/** what must be the same on both paths: the headers less those that differ by nature */
function comparable(a: Answer) {
  const { date: _d, 'x-served-by': _s, 'x-request-id': id, 'keep-alive': _k, connection: _c, ...headers } = a.headers;
  return { status: a.status, body: a.body, headers, requestIdLength: String(id).length };
}

const json = { 'content-type': 'application/json' };
const key = { ...json, 'x-api-key': 'k' };
const cases: Record<string, [Record<string, string>, (Buffer | string)?]> = {
  'an allowed call': [key, '{"agent_id":"a","tool_name":"t","params":{"n":[1,{"x":null}]}}'],
  'another status': [key, '{"status":202}'],
  'an agent-scoped key': [{ ...json, 'x-api-key': 'agent' }, '{"a":1}'],
  'a request id given': [{ ...key, 'x-request-id': 'abc-123' }, '{"a":1}'],
  'an invalid request id': [{ ...key, 'x-request-id': 'no spaces allowed' }, '{"a":1}'],
  'no credentials': [json, '{"a":1}'],
  'malformed JSON': [key, '{"a":'],
  'an empty body': [key, ''],
  'a NUL in the body': [key, '{"a":"x\\u0000y"}'],
  'a __proto__ key': [key, '{"__proto__":{"x":1}}'],
  'a gzip body (express.json reads it)': [{ ...key, 'content-encoding': 'gzip' }, gzipSync('{"z":1}')],
  'another media type': [{ 'content-type': 'text/plain', 'x-api-key': 'k' }, 'hello'],
  'too large': [key, `{"s":"${'x'.repeat(GOVERNED_BODY_LIMIT)}"}`],
  'rate limited': [{ ...key, 'x-limit': 'over' }, '{"a":1}'],
  'a sync throw': [key, '{"fail":"sync"}'],
  'an async throw': [key, '{"fail":"async"}'],
  'next(err)': [key, '{"fail":"next"}'],
  'a bug': [key, '{"fail":"plain"}'],
};

describe('the governed call outside express', () => {
  it.each(Object.entries(cases))('%s: the same answer as express', async (_name, [headers, body]) => {
    const edge = await send(GOVERNED_URL, headers, body);
    const viaExpress = await send(`${GOVERNED_URL}/`, headers, body);
    // the edge served only the exact URL (what never reached a step has no x-served-by)
    if (edge.headers['x-served-by']) expect(edge.headers['x-served-by']).toBe('edge');
    if (viaExpress.headers['x-served-by']) expect(viaExpress.headers['x-served-by']).toBe('express');
    expect(comparable(edge)).toEqual(comparable(viaExpress));
  });

  it('answers an allowed call with the handler’s status, headers and body', async () => {
    const a = await send(GOVERNED_URL, { ...key, 'x-request-id': 'r-1' }, '{"a":1}');
    expect(a.headers['x-served-by']).toBe('edge');
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(a.headers['x-step']).toBe('7');
    expect(a.headers['x-request-id']).toBe('r-1');
    expect(a.body).toEqual({ body: { a: 1 }, path: '/mcp/tools/call', query: {}, auth: { tenantId: 't1', method: 'api_key', isAdmin: false, keyScope: 'tenant', keyHash: 'h' }, id: 3, route: '/mcp/tools/call' });
  });

  it('sheds over the in-flight limit in the same way, and counts the route in the metrics', async () => {
    const held = send(GOVERNED_URL, key, '{"hold":true}');
    await new Promise((r) => setTimeout(r, 100));
    const edge = await send(GOVERNED_URL, key, '{"a":1}');
    const viaExpress = await send(`${GOVERNED_URL}/`, key, '{"a":1}');
    release();
    expect((await held).status).toBe(200);
    expect(edge.status).toBe(503);
    expect(edge.headers['retry-after']).toBeDefined();
    expect(comparable(edge)).toEqual(comparable(viaExpress));
    const counted = (await metrics.httpRequests.get()).values.filter((v) => v.labels.route === '/mcp/tools/call');
    expect(counted.length).toBeGreaterThan(0);
  });

  it('hands any other request to express', async () => {
    const withQuery = await send(`${GOVERNED_URL}?x=1`, key, '{"a":1}');
    expect(withQuery.headers['x-served-by']).toBe('express');
    expect(withQuery.body).toMatchObject({ query: { x: '1' } });
  });
});
