/**
 * The governed route's own body reader answers every request exactly as express.json did: two apps over
 * real HTTP, one with governedJsonBody in front of express.json (as app.ts mounts the governed route), one
 * with express.json alone, the same requests, the same status and body (the parsed body echoed, or the
 * error as the one error handler maps it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createLogger } from '@agw/shared';
import express, { type RequestHandler } from 'express';
import { errorHandler } from './error-handler';
import { GOVERNED_BODY_LIMIT, governedJsonBody } from './governed-body';

const jsonBody = express.json({ limit: GOVERNED_BODY_LIMIT, strict: false, type: ['application/json', 'application/*+json'] });
const servers: http.Server[] = [];

async function start(parser: RequestHandler): Promise<number> {
  const app = express();
  app.post('/call', parser, (req, res) => void res.json({ body: req.body === undefined ? '(undefined)' : req.body }));
  app.use(errorHandler(createLogger('test', 'silent')));
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

let fast: number;
let plain: number;
beforeAll(async () => {
  fast = await start(governedJsonBody(jsonBody));
  plain = await start(jsonBody);
});
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** one raw request (so Content-Length and chunking are ours to choose) */
function send(port: number, headers: Record<string, string>, body?: Buffer | string, chunked = false): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/call', method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
    });
    req.on('error', reject);
    if (body !== undefined && !chunked) req.setHeader('content-length', Buffer.byteLength(body));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** name → [headers, body, chunked]; bodies made when sent (a test title must not format a megabyte) */
const cases: Record<string, [Record<string, string>, (Buffer | string)?, boolean?]> = {
  'an object': [{ 'content-type': 'application/json' }, '{"agent_id":"a","params":{"n":[1,2,{"x":null}]}}'],
  'utf-8 text': [{ 'content-type': 'application/json; charset=utf-8' }, '{"s":"héllo ✓ 𝄞"}'],
  'a quoted charset': [{ 'content-type': 'application/json; charset="UTF-8"' }, '{"a":1}'],
  'a byte order mark': [{ 'content-type': 'application/json' }, '\uFEFF{"a":1}'],
  'an empty body': [{ 'content-type': 'application/json' }, ''],
  'a JSON value that is not an object': [{ 'content-type': 'application/json' }, '"just a string"'],
  'malformed JSON': [{ 'content-type': 'application/json' }, '{"a":'],
  'trailing garbage': [{ 'content-type': 'application/json' }, '{"a":1} x'],
  'invalid UTF-8': [{ 'content-type': 'application/json' }, Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  'another charset': [{ 'content-type': 'application/json; charset=latin1' }, '{"a":1}'],
  'a +json media type': [{ 'content-type': 'application/vnd.agw+json' }, '{"a":1}'],
  'text/plain': [{ 'content-type': 'text/plain' }, '{"a":1}'],
  'no content type': [{}, '{"a":1}'],
  gzip: [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync('{"a":1}')],
  'identity encoding': [{ 'content-type': 'application/json', 'content-encoding': 'identity' }, '{"a":1}'],
  'bad gzip': [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, 'not gzip'],
  'chunked, no length': [{ 'content-type': 'application/json' }, '{"a":1}', true],
  'no body': [{ 'content-type': 'application/json' }],
};

test.each(Object.keys(cases))('%s: the same answer as express.json', async (name) => {
  const [headers, body, chunked] = cases[name];
  const [a, b] = await Promise.all([send(fast, headers, body, chunked), send(plain, headers, body, chunked)]);
  expect(a).toEqual(b);
  expect(a.status).toBeLessThan(500);
});

test('the answers above are the ones the API documents (a parse error is a 422, too large a 413)', async () => {
  expect(await send(fast, { 'content-type': 'application/json' }, '{"a":')).toMatchObject({ status: 422, body: { detail: [{ loc: ['body'], type: 'json_invalid' }] } });
  const huge = `"${'x'.repeat(GOVERNED_BODY_LIMIT)}"`;
  const [a, b] = await Promise.all([send(fast, { 'content-type': 'application/json' }, huge), send(plain, { 'content-type': 'application/json' }, huge)]);
  expect(a).toEqual(b);
  expect(a.status).toBe(413);
  expect(await send(fast, { 'content-type': 'application/json' }, '{"a":1}')).toEqual({ status: 200, body: { body: { a: 1 } } });
});
