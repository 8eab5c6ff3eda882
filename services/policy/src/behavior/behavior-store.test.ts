/** Integration: the behavioral store against the real local Redis. */
import { randomUUID } from 'node:crypto';
import { DependencyUnavailableError, createRedis, waitForRedis } from '@agw/shared';
import { anomalyScore } from './anomaly-score';
import { ANOMALY_CHECK_SCRIPT, ANOMALY_MODEL_ARGS, BehaviorStore, KEY_PREFIX } from './behavior-store';

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

test('the record script writes the anomaly score and factors exactly as anomalyScore computes and JSON writes them', async () => {
  // the Lua port against the TypeScript model: a grid of small counts plus random larger ones
  const inputs: Array<[number, number, number, boolean]> = [];
  for (let a1h = 0; a1h <= 40; a1h += 3) for (const extra of [0, 1, 7, 23, 230, 2301]) for (const v of [0, 1, 2, 5, 17]) for (const nt of [false, true]) inputs.push([a1h, a1h + extra, Math.min(v, a1h + extra), nt]);
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let i = 0; i < 400; i++) {
    const a1h = rnd(5000);
    const a24h = a1h + rnd(100_000);
    inputs.push([a1h, a24h, rnd(a24h + 1), rnd(2) === 1]);
  }
  const results = (await Promise.all(
    inputs.map(([a1h, a24h, v, nt]) => redis.eval(ANOMALY_CHECK_SCRIPT, 0, String(a1h), String(a24h), String(v), nt ? '1' : '0', ...ANOMALY_MODEL_ARGS)),
  )) as Array<[string, string]>;
  inputs.forEach(([actions1h, actions24h, violations24h, newTool], i) => {
    const { score, factors } = anomalyScore({ actions1h, actions24h, violations24h, newTool });
    expect({ input: inputs[i], score: results[i][0], factors: results[i][1] }).toEqual({ input: inputs[i], score: String(score), factors: JSON.stringify(factors) });
  });

  // and what record() leaves in Redis: the model applied to the counts after the decision
  const tenant = randomUUID();
  const now = Date.now();
  const tools = new Set<string>();
  let violations = 0;
  for (let i = 0; i < 30; i++) {
    const tool = `svc_${i % 7 === 6 ? `new${i}` : i % 3}`;
    const violation = i % 4 === 1;
    const at = await store.record(tenant, 'ag', facts({ tool, violation }), now - (30 - i) * 1200_000);
    violations += violation ? 1 : 0;
    const h = await redis.hgetall(`${KEY_PREFIX}${tenant}:ag:score`);
    const behavioral = await store.snapshot(tenant, 'ag', tool, '', now - (30 - i) * 1200_000 + 1);
    const expected = anomalyScore({
      actions1h: behavioral.action_count_1h - 1,
      actions24h: behavioral.action_count_24h - 1,
      violations24h: behavioral.violation_count_24h,
      newTool: !tools.has(tool),
    });
    tools.add(tool);
    expect({ i, score: h.score, factors: h.factors, updated_at: h.updated_at }).toEqual({ i, score: String(expected.score), factors: JSON.stringify(expected.factors), updated_at: new Date(now - (30 - i) * 1200_000).toISOString() });
    expect(at.violation_count_24h).toBeLessThanOrEqual(violations);
  }
  expect(await redis.ttl(`${KEY_PREFIX}${tenant}:ag:score`)).toBeGreaterThan(29 * 24 * 3600);
});
