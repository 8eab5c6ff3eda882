/** The per-IP limit of the public auth endpoints, against the real Redis, through a real HTTP server. */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { TEST_REDIS_URL, createLogger, createRedis, waitForRedis } from '@agw/shared';
import { errorHandler } from '../src/http/error-handler';
import { ipRateLimit } from '../src/http/rate-limit.middleware';

const redis = createRedis(TEST_REDIS_URL);
let server: http.Server;
let url: string;

beforeAll(async () => {
  await waitForRedis(redis);
  const app = express();
  app.post('/auth/login', ipRateLimit({ redis, perMinute: 3, name: `test-${randomUUID()}` }), (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorHandler(createLogger('test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/auth/login`;
});
afterAll(async () => {
  redis.disconnect();
  await new Promise((r) => server.close(r));
});

it('allows perMinute attempts per client IP, then answers 429 with a detail', async () => {
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await fetch(url, { method: 'POST' })).status);
  expect(statuses).toEqual([200, 200, 200, 429]);
  const r = await fetch(url, { method: 'POST' });
  expect(r.status).toBe(429);
  expect(((await r.json()) as { detail: string }).detail).toMatch(/Too many attempts/);
});
