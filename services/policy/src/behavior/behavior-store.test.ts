/**
 * Integration: the behavioral store against the real local Redis (db from REDIS_URL, default 0; every test
 * works under its own random tenant, so it sees only its own keys).
 */
import { randomUUID } from 'node:crypto';
import { DependencyUnavailableError, TEST_REDIS_URL, createRedis, waitForRedis } from '@agw/shared';
import { anomalyScore } from './anomaly-score';
import { ANOMALY_CHECK_SCRIPT, ANOMALY_MODEL_ARGS, BehaviorStore, KEY_PREFIX } from './behavior-store';

const redis = createRedis(TEST_REDIS_URL);
const store = new BehaviorStore(redis);
beforeAll(() => waitForRedis(redis));
afterAll(() => redis.disconnect());

const MIN = 60_000;
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const key = (tenant: string, agent: string, suffix: string) => `${KEY_PREFIX}${tenant}:${agent}:${suffix}`;

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
  // (far from the bucket edges: the same counts at any time of day; the edges are tested below)
  await store.record(tenant, 'a1', facts({ amount: 10 }), now - 2 * 3600_000); // 2 h ago: in 24 h, not in 1 h
  await store.record(tenant, 'a1', facts({ violation: true, amount: 5.5 }), now - 60_000);
  await store.record(tenant, 'a1', facts({ tool: 'svc_y' }), now - 30_000);
  await store.record(tenant, 'a1', facts(), now - 25 * 3600_000); // older than 24 h: outside every window
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

test('recordForPass2 answers what the snapshot reads and records the call; with countViolation it leaves what record with the violation leaves', async () => {
  // two agents with the same history: one recorded as before (snapshot, then record with the decision's
  // violation), one through pass 2's single script and, for a violation, its count afterwards
  const tenant = randomUUID();
  const now = Date.now();
  const history = Array.from({ length: 24 }, (_, i) => ({ tool: `svc_${i % 5 === 4 ? `new${i}` : i % 3}`, violation: i % 3 === 2, amount: i % 2 ? i * 1.5 : null, sessionId: i % 4 === 0 ? 's1' : '', at: now - (24 - i) * 1800_000 }));
  const state = async (agent: string) => {
    const out: Record<string, unknown> = {};
    for (const suffix of ['b:a', 'b:t:svc_0', 'b:t:svc_1', 'b:v', 'b:amt', 's:s1', 'tools', 'last', 'score']) {
      const k = key(tenant, agent, suffix);
      const type = await redis.type(k);
      out[suffix] = type === 'hash' ? await redis.hgetall(k) : type === 'set' ? (await redis.smembers(k)).sort() : await redis.get(k);
    }
    return out;
  };
  for (const h of history) {
    const before = await store.snapshot(tenant, 'old', h.tool, h.sessionId, h.at);
    await store.record(tenant, 'old', facts(h), h.at);
    const { behavioral, newTool } = await store.recordForPass2(tenant, 'new', { actionId: randomUUID(), tool: h.tool, sessionId: h.sessionId, amount: h.amount }, h.at);
    expect(behavioral).toEqual(before);
    if (h.violation) await store.countViolation(tenant, 'new', newTool, h.at);
    expect(await state('new')).toEqual(await state('old'));
  }
  // the history did carry violations (counted by countViolation alone on the second agent)
  expect(Object.values((await state('new'))['b:v'] as Record<string, string>).reduce((n, v) => n + Number(v), 0)).toBe(history.filter((h) => h.violation).length);
  expect(await redis.ttl(key(tenant, 'new', 'b:v'))).toBeGreaterThan(24 * 3600);
  expect(await redis.ttl(key(tenant, 'new', 'score'))).toBeGreaterThan(29 * 24 * 3600);
});

describe('time buckets: the documented resolution', () => {
  test('the 1 h window is the current minute and the 59 before it: edges at whole minutes', async () => {
    const tenant = randomUUID();
    const m = Math.floor(Date.now() / MIN);
    const now = m * MIN + 30_000;
    await store.record(tenant, 'a', facts(), (m - 59) * MIN); // 59.5 min before now: the oldest minute of the window
    await store.record(tenant, 'a', facts(), (m - 59) * MIN - 1); // 1 ms earlier: younger than 1 h, but its minute is out
    await store.record(tenant, 'a', facts(), now - 61 * MIN); // older than 1 h: never in
    expect(await store.snapshot(tenant, 'a', 'svc_x', '', now)).toMatchObject({ action_count_1h: 2, action_count_24h: 4 });
    // the oldest minute leaves the window when the next minute starts, not before
    expect(await store.snapshot(tenant, 'a', 'svc_x', '', (m + 1) * MIN - 1)).toMatchObject({ action_count_1h: 2, action_count_24h: 4 });
    expect(await store.snapshot(tenant, 'a', 'svc_x', '', (m + 1) * MIN)).toMatchObject({ action_count_1h: 1, action_count_24h: 4 });
  });

  test('the 24 h windows are the current hour and the 23 before it: edges at whole hours; a record prunes what left them', async () => {
    const tenant = randomUUID();
    const h = Math.floor(Date.now() / HOUR);
    const now = h * HOUR + 30 * MIN;
    // 23.5 h before now, in the oldest hour of the window: counts for every 24 h figure
    await store.record(tenant, 'a', facts({ violation: true, amount: 7 }), (h - 23) * HOUR);
    // 1 ms earlier (younger than 24 h, but its hour is out): counts for none
    await store.record(tenant, 'a', facts({ violation: true, amount: 100 }), (h - 23) * HOUR - 1);
    const inWindow = { action_count_24h: 2, tool_count_24h: 2, violation_count_24h: 1, session_total_amount: 7 };
    expect(await store.snapshot(tenant, 'a', 'svc_x', '', now)).toMatchObject(inWindow);
    expect(await store.snapshot(tenant, 'a', 'svc_x', '', (h + 1) * HOUR - 1)).toMatchObject(inWindow);
    const next = { action_count_1h: 1, action_count_24h: 1, tool_count_24h: 1, violation_count_24h: 0, session_total_amount: 0 };
    expect(await store.snapshot(tenant, 'a', 'svc_x', '', (h + 1) * HOUR)).toMatchObject(next);

    // a record at the next hour: what it returns, and the fields that left the windows are gone
    const at = (h + 1) * HOUR;
    expect(await store.record(tenant, 'a', facts(), at)).toMatchObject(next);
    const fields = async (suffix: string) => (await redis.hkeys(key(tenant, 'a', suffix))).sort();
    const atMin = Math.floor(at / MIN);
    expect(await fields('b:a')).toEqual([`h:${h + 1}`, `m:${atMin}`].sort());
    expect(await fields('b:t:svc_x')).toEqual([`h:${h + 1}`]);
    expect(await fields('b:v')).toEqual([]); // pruned to nothing: Redis removes the empty hash
    expect(await fields('b:amt')).toEqual([]);
    expect(await redis.exists(key(tenant, 'a', 'b:v'), key(tenant, 'a', 'b:amt'))).toBe(0);
  });

  test('keys keep their TTLs: counters 25 h after the last record, tools and score 30 days', async () => {
    const tenant = randomUUID();
    await store.record(tenant, 'a', facts({ violation: true, amount: 3 }), Date.now());
    for (const s of ['b:a', 'b:t:svc_x', 'b:v', 'b:amt', 'last']) {
      const ttl = await redis.ttl(key(tenant, 'a', s));
      expect({ s, ok: ttl > 25 * 3600 - 60 && ttl <= 25 * 3600 }).toEqual({ s, ok: true });
    }
    for (const s of ['tools', 'score']) expect(await redis.ttl(key(tenant, 'a', s))).toBeGreaterThan(29 * 24 * 3600);
  });
});

type Call = { at: number; tool: string; violation: boolean; amount: number | null };

/** A day of calls for one agent: 5 tools, every 7th a violation, every 3rd with an amount. */
function dayOfCalls(n: number, end: number): Call[] {
  return Array.from({ length: n }, (_, i) => ({
    at: end - DAY + Math.round(((i + 1) * DAY) / n),
    tool: `svc_${i % 5}`,
    violation: i % 7 === 3,
    amount: i % 3 === 0 ? (i % 50) + 0.25 : null,
  }));
}

/** What the snapshot at `now` must say for `calls`, by the documented resolution (whole minutes / hours). */
function expectedAt(calls: Call[], now: number, tool: string) {
  const m = Math.floor(now / MIN);
  const h = Math.floor(now / HOUR);
  const inHour = (c: Call) => Math.floor(c.at / MIN) > m - 60;
  const inDay = (c: Call) => Math.floor(c.at / HOUR) > h - 24;
  const day = calls.filter(inDay);
  return {
    action_count_1h: calls.filter(inHour).length + 1,
    action_count_24h: day.length + 1,
    tool_count_24h: day.filter((c) => c.tool === tool).length + 1,
    violation_count_24h: day.filter((c) => c.violation).length,
    session_total_amount: Math.round(day.reduce((sum, c) => sum + (c.amount ?? 0), 0) * 100) / 100,
  };
}

/** The layout of the sorted-set store before buckets, as a running deployment still holds it (written by hand). */
async function writeOldLayout(tenant: string, agent: string, calls: Call[]): Promise<void> {
  const k = (s: string) => key(tenant, agent, s);
  const p = redis.pipeline();
  for (const c of calls) {
    const id = randomUUID();
    p.zadd(k('a'), c.at, id);
    p.zadd(k(`t:${c.tool}`), c.at, id);
    if (c.violation) p.zadd(k('v'), c.at, id);
    if (c.amount !== null) p.zadd(k('amt'), c.at, `${id}:${c.amount}`);
    p.sadd(k('tools'), c.tool);
  }
  p.set(k('last'), String(calls[calls.length - 1].at), 'EX', 25 * 3600);
  for (const s of ['a', 'v', 'amt', ...new Set(calls.map((c) => `t:${c.tool}`))]) p.expire(k(s), 25 * 3600);
  const res = await p.exec();
  for (const [err] of res ?? []) expect(err).toBeNull();
}

/** Bytes of all of an agent's keys (MEMORY USAGE, every element counted) and their names. */
async function agentMemory(tenant: string, agent: string): Promise<{ bytes: number; keys: string[] }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${KEY_PREFIX}${tenant}:${agent}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  let bytes = 0;
  for (const k of keys) bytes += Number(await redis.call('MEMORY', 'USAGE', k, 'SAMPLES', '0'));
  return { bytes, keys: keys.sort() };
}

describe('bounded memory', () => {
  // a constant per agent and per tool: the hashes stay in Redis' compact listpack encoding (under the default
  // hash-max-listpack-entries of 128, whatever this server's setting) and prune themselves
  // measured: 5,472 bytes (b:a 1,384; b:amt 552; b:v and each b:t:<tool> 424; score 504; tools 384; last 104),
  // i.e. about 3.4 KB per agent and 0.42 KB per tool; the sorted sets held 6.9 MB for the same calls
  const BOUND_BYTES = 6_000; // one agent, 5 tools, violations and amounts
  const N = 20_000;

  test(`${N} calls over a simulated day: counts by the documented resolution, memory under ${BOUND_BYTES} bytes`, async () => {
    const tenant = randomUUID();
    const now = Math.floor(Date.now() / MIN) * MIN + 17_000;
    const calls = dayOfCalls(N, now - 1000);
    for (let i = 0; i < calls.length; i += 500) {
      await Promise.all(calls.slice(i, i + 500).map((c) => store.record(tenant, 'busy', facts({ tool: c.tool, violation: c.violation, amount: c.amount }), c.at)));
    }
    const snap = await store.snapshot(tenant, 'busy', 'svc_0', '', now);
    expect(snap).toMatchObject(expectedAt(calls, now, 'svc_0'));
    expect(snap.action_count_24h).toBeGreaterThan(0.95 * N); // the window is 23-24 h of this 24 h of calls
    expect(snap.last_action_seconds_ago).toBe(1);

    const { bytes, keys } = await agentMemory(tenant, 'busy');
    expect(keys).toEqual(['b:a', 'b:amt', 'b:v', 'last', 'score', 'tools', ...[0, 1, 2, 3, 4].map((i) => `b:t:svc_${i}`)].map((s) => key(tenant, 'busy', s)).sort());
    expect(await redis.hlen(key(tenant, 'busy', 'b:a'))).toBeLessThanOrEqual(60 + 24);
    for (const s of ['b:v', 'b:amt', 'b:t:svc_0']) expect(await redis.hlen(key(tenant, 'busy', s))).toBeLessThanOrEqual(24);
    for (const s of ['b:a', 'b:v', 'b:amt', 'b:t:svc_0']) expect(await redis.object('ENCODING', key(tenant, 'busy', s))).toBe('listpack');
    expect(bytes).toBeLessThan(BOUND_BYTES);
    if (process.env.BEHAVIOR_MEMORY_REPORT) process.stdout.write(`\nbehavior store, ${N} calls of one agent over a day: buckets ${bytes} bytes\n`);
  }, 120_000);

  test('upgrade: an agent of the sorted-set store is folded into buckets on its first snapshot, nothing lost', async () => {
    // the same day of calls as above, written in the old layout: the counts through the new store are the
    // ones the new store gives for calls it recorded itself
    const tenant = randomUUID();
    const now = Math.floor(Date.now() / MIN) * MIN + 17_000;
    const calls = dayOfCalls(N, now - 1000);
    await writeOldLayout(tenant, 'old', calls);
    const before = await agentMemory(tenant, 'old');

    const snap = await store.snapshot(tenant, 'old', 'svc_0', '', now);
    expect(snap).toMatchObject({ ...expectedAt(calls, now, 'svc_0'), last_action_seconds_ago: 1 });
    for (const s of ['a', 't:svc_0', 'v', 'amt']) expect({ s, exists: await redis.exists(key(tenant, 'old', s)) }).toEqual({ s, exists: 0 });
    // a tool's set is folded when that tool is evaluated; until then it is there (or expires as before)
    expect(await redis.exists(key(tenant, 'old', 't:svc_1'))).toBe(1);
    expect(await store.snapshot(tenant, 'old', 'svc_1', '', now)).toMatchObject(expectedAt(calls, now, 'svc_1'));
    expect(await redis.exists(key(tenant, 'old', 't:svc_1'))).toBe(0);
    // read again: the same counts (folded once, not twice)
    expect(await store.snapshot(tenant, 'old', 'svc_0', '', now)).toMatchObject(expectedAt(calls, now, 'svc_0'));
    for (const s of ['b:a', 'b:v', 'b:amt', 'b:t:svc_0']) expect(await redis.ttl(key(tenant, 'old', s))).toBeGreaterThan(24 * 3600);

    for (const t of [2, 3, 4]) await store.snapshot(tenant, 'old', `svc_${t}`, '', now);
    const after = await agentMemory(tenant, 'old');
    expect(after.bytes).toBeLessThan(BOUND_BYTES);
    expect(before.bytes).toBeGreaterThan(100 * after.bytes);
    if (process.env.BEHAVIOR_MEMORY_REPORT) {
      process.stdout.write(`behavior store, ${N} calls of one agent over a day: sorted sets ${before.bytes} bytes, folded into buckets ${after.bytes} bytes\n`);
    }
  }, 120_000);

  test('upgrade: the first record folds too, and its result and score are those of the folded counts', async () => {
    const tenant = randomUUID();
    const now = Date.now();
    // the first test's calls, in the old layout (far from the bucket edges)
    const calls: Call[] = [
      { at: now - 25 * HOUR, tool: 'svc_x', violation: false, amount: 1000 }, // older than 24 h: left behind
      { at: now - 2 * HOUR, tool: 'svc_x', violation: false, amount: 10 },
      { at: now - 60_000, tool: 'svc_x', violation: true, amount: 5.5 },
      { at: now - 30_000, tool: 'svc_y', violation: false, amount: null },
    ];
    await writeOldLayout(tenant, 'old', calls);
    await writeOldLayout(tenant, 'old2', calls);
    const expected = { action_count_1h: 3, action_count_24h: 4, tool_count_24h: 3, violation_count_24h: 1, session_total_amount: 15.5 };
    expect(expectedAt(calls, now, 'svc_x')).toEqual(expected);
    expect(await store.snapshot(tenant, 'old', 'svc_x', '', now)).toMatchObject({ ...expected, last_action_seconds_ago: 30 });

    // record: returns what pass 2 saw (the calls so far and this one; violations and amounts before it)
    expect(await store.record(tenant, 'old2', facts({ violation: true, amount: 1 }), now)).toMatchObject({ ...expected, last_action_seconds_ago: 30 });
    for (const s of ['a', 't:svc_x', 'v', 'amt']) expect(await redis.exists(key(tenant, 'old2', s))).toBe(0);
    const a = await store.anomaly(tenant, 'old2');
    expect(a.factors).toEqual(anomalyScore({ actions1h: 3, actions24h: 4, violations24h: 2, newTool: false }).factors);
    expect(await store.snapshot(tenant, 'old2', 'svc_x', '', now + 1)).toMatchObject({ action_count_1h: 4, action_count_24h: 5, tool_count_24h: 4, violation_count_24h: 2, session_total_amount: 16.5 });

    // an agent whose old sets hold calls of a writer whose clock ran ahead: folded into their own buckets
    await writeOldLayout(tenant, 'ahead', [{ at: now + 2 * MIN, tool: 'svc_x', violation: true, amount: 2 }, { at: now + 2 * HOUR, tool: 'svc_x', violation: false, amount: 3 }]);
    expect(await store.snapshot(tenant, 'ahead', 'svc_x', '', now)).toMatchObject({ action_count_1h: 3, action_count_24h: 3, tool_count_24h: 3, violation_count_24h: 1, session_total_amount: 5 });
    expect(await store.snapshot(tenant, 'ahead', 'svc_x', '', now + 2 * HOUR)).toMatchObject({ action_count_1h: 2, action_count_24h: 3, violation_count_24h: 1, session_total_amount: 5 });
  });
});
