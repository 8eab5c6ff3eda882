/**
 * The real drivers' errors when a store cannot be reached are recognised as such (unreachableStore), so
 * the gateway answers 503 and a gRPC service UNAVAILABLE, never a 500: Postgres refused (nothing listens),
 * Postgres reset mid-query (a TCP proxy that drops the connection), Redis refused, Redis connected but
 * silent (a command's wait is bounded).
 */
import net from 'node:net';
import { sql } from 'kysely';
import { createDb, preparedQuery } from '../src/db/database';
import { AppError, StoreUnavailableError, isDependencyDown, unreachableStore } from '../src/errors';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../src/config';
import { createRedis, waitForRedis } from '../src/redis';
import { postgresProxy } from './support/postgres-proxy';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../src/test-stores';

const target = new URL(TEST_DATABASE_URL);

/** A port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

test('Postgres refusing connections is named Postgres', async () => {
  const url = new URL(target.toString());
  url.hostname = '127.0.0.1';
  url.port = String(await deadPort());
  const db = createDb(url.toString(), { max: 1 });
  try {
    const e = await caught(sql`SELECT 1`.execute(db));
    expect(e).toBeDefined();
    expect(unreachableStore(e)).toBe('Postgres');
    // the hot path's prepared statements too
    expect(unreachableStore(await caught(preparedQuery(db, 'one', 'SELECT 1', [])))).toBe('Postgres');
  } finally {
    await db.destroy();
  }
});

test('a Postgres connection dropped mid-query is named Postgres', async () => {
  const proxy = await postgresProxy(target);
  const db = createDb(proxy.url, { max: 1 });
  try {
    const slow = caught(sql`SELECT pg_sleep(5)`.execute(db));
    await new Promise((r) => setTimeout(r, 300));
    proxy.cut();
    expect(unreachableStore(await slow)).toBe('Postgres');
    // and a transaction cut before its COMMIT
    const tx = caught(
      db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        proxy.cut();
        await sql`SELECT pg_sleep(1)`.execute(trx);
      }),
    );
    expect(unreachableStore(await tx)).toBe('Postgres');
  } finally {
    await db.destroy();
    proxy.close();
  }
});

test('Redis refusing connections is named Redis', async () => {
  const redis = createRedis(`redis://127.0.0.1:${await deadPort()}/0`);
  try {
    await new Promise((r) => setTimeout(r, 200));
    const e = await caught(redis.get('k'));
    expect(unreachableStore(e)).toBe('Redis');
  } finally {
    redis.disconnect();
  }
});

test('a Redis that is connected but silent fails a command as Redis unavailable after commandTimeoutMs, and answers again when it speaks', async () => {
  const upstream = new URL(TEST_REDIS_URL);
  let silent = false;
  const held: Array<() => void> = [];
  // a TCP proxy to the real Redis that can stop forwarding commands without closing anything (a partition)
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 6379), upstream.hostname);
    client.on('data', (chunk) => (silent ? held.push(() => server.write(chunk)) : server.write(chunk)));
    server.pipe(client);
    for (const [a, b] of [[client, server], [server, client]] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const redis = createRedis(`redis://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/0`, { commandTimeoutMs: 300 });
  try {
    await waitForRedis(redis);
    expect(await redis.ping()).toBe('PONG');
    silent = true;
    const t0 = performance.now();
    const e = await caught(redis.get('agw:test:silent'));
    const waited = performance.now() - t0;
    expect(unreachableStore(e)).toBe('Redis');
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(5_000);
    silent = false;
    for (const f of held.splice(0)) f(); // the held command reaches Redis late; its answer finds no caller
    expect(await redis.ping()).toBe('PONG');
  } finally {
    redis.disconnect();
    proxy.close();
  }
});

test('the default wait for a Redis answer is bounded (DEFAULT_REDIS_COMMAND_TIMEOUT_MS)', () => {
  const redis = createRedis('redis://127.0.0.1:1/0', {});
  try {
    expect(redis.options.commandTimeout).toBe(DEFAULT_REDIS_COMMAND_TIMEOUT_MS);
    expect(DEFAULT_REDIS_COMMAND_TIMEOUT_MS).toBeGreaterThan(0);
  } finally {
    redis.disconnect();
  }
});

test('other errors are not store failures; StoreUnavailableError is a dependency failure with a Retry-After', () => {
  expect(unreachableStore(new Error('boom'))).toBeUndefined();
  expect(unreachableStore(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeUndefined();
  expect(unreachableStore(new AppError('internal', 'x'))).toBeUndefined();
  const e = new StoreUnavailableError('Postgres', 'gateway');
  expect(e.message).toBe('Postgres is unreachable (gateway)');
  expect(isDependencyDown(e)).toBe(true);
  expect(e.retryAfterSeconds).toBeGreaterThan(0);
});
