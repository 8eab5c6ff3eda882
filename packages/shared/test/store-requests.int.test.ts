/**
 * agw_store_requests_total counts what each real client sends: Postgres statements (a transaction's BEGIN
 * and COMMIT each), Redis commands (a script call is one, an auto-pipelined command each), NATS messages
 * published and received; every service's registry shows them.
 */
import { sql } from 'kysely';
import { createDb } from '../src/db/database';
import { createMetricsRegistry } from '../src/metrics';
import { createRedis, waitForRedis } from '../src/redis';
import { storeRequests } from '../src/store-requests';
import { TEST_DATABASE_URL, TEST_REDIS_URL, openTestBus } from '../src/test-stores';

/** The metric's value for one store, as /metrics shows it. */
async function scraped(registry: ReturnType<typeof createMetricsRegistry>, name: string, store?: string): Promise<number> {
  const m = (await registry.getSingleMetric(name)?.get())?.values.find((v) => store === undefined || v.labels.store === store);
  return m?.value ?? 0;
}

test('Postgres: one request per statement, BEGIN and COMMIT included', async () => {
  const db = createDb(TEST_DATABASE_URL, { max: 1 });
  try {
    await sql`SELECT 1`.execute(db); // connects
    const before = storeRequests().postgres;
    await sql`SELECT 1`.execute(db);
    expect(storeRequests().postgres - before).toBe(1);
    await db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      await sql`SELECT 2`.execute(trx);
    });
    expect(storeRequests().postgres - before).toBe(5);
    const registry = createMetricsRegistry('test');
    expect(await scraped(registry, 'agw_store_requests_total', 'postgres')).toBe(storeRequests().postgres);
  } finally {
    await db.destroy();
  }
});

test('Redis: one request per command, a script call is one, auto-pipelined commands each', async () => {
  const redis = createRedis(TEST_REDIS_URL);
  try {
    await waitForRedis(redis);
    const before = storeRequests().redis;
    await redis.eval("redis.call('SET', KEYS[1], 'x'); return redis.call('GET', KEYS[1])", 1, 'agw:test:store-requests');
    expect(storeRequests().redis - before).toBe(1);
    await Promise.all([redis.get('agw:test:store-requests'), redis.get('agw:test:store-requests'), redis.del('agw:test:store-requests')]);
    expect(storeRequests().redis - before).toBe(4);
    const registry = createMetricsRegistry('test');
    expect(await scraped(registry, 'agw_store_requests_total', 'redis')).toBe(storeRequests().redis);
  } finally {
    redis.disconnect();
  }
});

test('NATS: messages published and received, kept after the connection closes', async () => {
  const bus = await openTestBus('TEST', 'store-requests-test');
  const before = storeRequests();
  const sub = bus.nc.subscribe('agw.test.store-requests', { max: 3 });
  for (let i = 0; i < 3; i++) bus.nc.publish('agw.test.store-requests');
  for await (const _ of sub) {
    /* the three messages come back */
  }
  const after = storeRequests();
  expect(after.nats - before.nats).toBeGreaterThanOrEqual(3);
  expect(after.natsReceived - before.natsReceived).toBeGreaterThanOrEqual(3);
  await bus.close();
  await new Promise((r) => setImmediate(r));
  const closed = storeRequests();
  expect(closed.nats).toBeGreaterThanOrEqual(after.nats);
  const registry = createMetricsRegistry('test');
  expect(await scraped(registry, 'agw_store_requests_total', 'nats')).toBe(closed.nats);
  expect(await scraped(registry, 'agw_nats_messages_received_total')).toBe(closed.natsReceived);
});
