/** Integration: the behavioral store against the real local Redis. */
import { randomUUID } from 'node:crypto';
import { DependencyUnavailableError, createRedis, waitForRedis } from '@agw/shared';
import { BehaviorStore } from './behavior-store';

const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
const store = new BehaviorStore(redis);
beforeAll(() => waitForRedis(redis));
afterAll(() => redis.disconnect());

const facts = (over: Partial<Parameters<BehaviorStore['record']>[2]> = {}) => ({ actionId: randomUUID(), tool: 'svc_x', sessionId: '', amount: null, violation: false, ...over });

test('counts per tenant and agent; the snapshot includes the call being evaluated', async () => {
  const tenant = randomUUID();
  const now = Date.now();
  expect(await store.snapshot(tenant, 'a1', 'svc_x', '', now)).toEqual({
    action_count_1h: 1,
    action_count_24h: 1,
    tool_count_24h: 1,
    violation_count_24h: 0,
    anomaly_score: 0,
    last_action_seconds_ago: -1,
    session_total_amount: 0,
  });
  await store.record(tenant, 'a1', facts({ amount: 10 }), now - 2 * 3600_000); // 2 h ago: in 24 h, not in 1 h
  await store.record(tenant, 'a1', facts({ violation: true, amount: 5.5 }), now - 60_000);
  await store.record(tenant, 'a1', facts({ tool: 'svc_y' }), now - 30_000);
  await store.record(tenant, 'a1', facts(), now - 25 * 3600_000); // older than 24 h: trimmed away
  const s = await store.snapshot(tenant, 'a1', 'svc_x', '', now);
  expect(s).toMatchObject({ action_count_1h: 3, action_count_24h: 4, tool_count_24h: 3, violation_count_24h: 1, last_action_seconds_ago: expect.any(Number), session_total_amount: 15.5 });
  expect(await store.snapshot(randomUUID(), 'a1', 'svc_x', '', now)).toMatchObject({ action_count_24h: 1, violation_count_24h: 0 });
  expect(await store.snapshot(tenant, 'a2', 'svc_x', '', now)).toMatchObject({ action_count_24h: 1 });
});

test('session totals are per session; record returns the state at decision time', async () => {
  const tenant = randomUUID();
  const now = Date.now();
  await store.record(tenant, 'a', facts({ sessionId: 's1', amount: 100 }), now - 1000);
  const at = await store.record(tenant, 'a', facts({ sessionId: 's1', amount: 50 }), now);
  expect(at).toMatchObject({ session_total_amount: 100, action_count_24h: 2, last_action_seconds_ago: 1 });
  expect((await store.snapshot(tenant, 'a', 'svc_x', 's1', now)).session_total_amount).toBe(150);
  expect((await store.snapshot(tenant, 'a', 'svc_x', 's2', now)).session_total_amount).toBe(0);
});

test('the anomaly score moves on every decision; clearing counters keeps it, clearing history does not', async () => {
  const tenant = randomUUID();
  const now = Date.now();
  for (let i = 0; i < 4; i++) await store.record(tenant, 'bad', facts({ violation: i > 0 }), now - (4 - i) * 1000);
  const a = await store.anomaly(tenant, 'bad');
  expect(a.score).toBe(0.54);
  expect(a.factors).toMatchObject({ violation_count_24h: 3, action_count_24h: 4 });
  expect(await store.clear(tenant, 'bad', true)).toBeGreaterThan(0);
  expect((await store.anomaly(tenant, 'bad')).score).toBe(0.54);
  expect((await store.snapshot(tenant, 'bad', 'svc_x', '', now)).action_count_24h).toBe(1);
  await store.clear(tenant, 'bad', false);
  expect((await store.anomaly(tenant, 'bad')).score).toBe(0);
});

test('agent ids with glob characters only clear their own keys', async () => {
  const tenant = randomUUID();
  await store.record(tenant, 'ab', facts(), Date.now());
  await store.record(tenant, 'a*', facts(), Date.now());
  await store.clear(tenant, 'a*', false);
  expect((await store.snapshot(tenant, 'ab', 'svc_x', '', Date.now())).action_count_24h).toBe(2);
});

test('Redis unreachable is a DependencyUnavailableError (the gateway failure mode applies)', async () => {
  const down = createRedis('redis://127.0.0.1:1/0');
  try {
    await expect(new BehaviorStore(down).snapshot(randomUUID(), 'a', 't', '', Date.now())).rejects.toBeInstanceOf(DependencyUnavailableError);
  } finally {
    down.disconnect();
  }
});
