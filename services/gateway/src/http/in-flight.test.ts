/** The in-flight gauge over real HTTP: up while a request is served, down when it is answered or abandoned. */
import type { Server } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge, Registry } from '@agw/shared';
import express from 'express';
import { countInFlight } from './in-flight';

const registry = new Registry();
const gauge = new Gauge({ name: 'agw_http_requests_in_flight', help: 'test', registers: [registry] });
const value = async () => (await gauge.get()).values[0]?.value ?? 0;
let release: () => void = () => undefined;
let server: Server;
let port: number;

beforeAll(async () => {
  const app = express();
  app.use(countInFlight(gauge));
  app.get('/slow', (_req, res) => {
    release = () => void res.json({ ok: true });
  });
  app.get('/fast', (_req, res) => void res.json({ ok: true }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => server.close(r)));

const until = async (want: number) => {
  for (let i = 0; i < 100 && (await value()) !== want; i++) await new Promise((r) => setTimeout(r, 20));
  return value();
};

it('counts a request while it is served and forgets it once answered', async () => {
  expect(await value()).toBe(0);
  const slow = fetch(`http://127.0.0.1:${port}/slow`);
  expect(await until(1)).toBe(1);
  expect((await fetch(`http://127.0.0.1:${port}/fast`)).status).toBe(200);
  expect(await until(1)).toBe(1);
  release();
  expect((await slow).status).toBe(200);
  expect(await until(0)).toBe(0);
});

it('forgets a request whose client went away before the answer', async () => {
  const req = http.get(`http://127.0.0.1:${port}/slow`);
  req.on('error', () => undefined);
  expect(await until(1)).toBe(1);
  req.destroy();
  expect(await until(0)).toBe(0);
  release();
});
