/**
 * Behavioral counters per tenant and agent in Redis (keys `agw:beh:<tenant>:<agent>:*`), written on every
 * decision and read for pass 2. Counts are kept in time buckets, so an agent's memory is a constant (and a
 * constant per tool it used), whatever its call rate: about 3.4 KB per agent plus 0.42 KB per tool
 * (behavior-store.test.ts measures it with MEMORY USAGE: 5.5 KB for 20,000 calls of 5 tools in a day, where
 * the sorted sets of the store before held 6.9 MB).
 *
 *   b:a          HASH  m:<epoch minute> and h:<epoch hour> -> calls   (at most 60 + 24 fields)
 *   b:t:<tool>   HASH  h:<epoch hour> -> calls of one tool             (at most 24 fields)
 *   b:v          HASH  h:<epoch hour> -> decisions with a violation (violation_cooldown_active alone not counted)
 *   b:amt        HASH  h:<epoch hour> -> sum of params.amount of calls without a session (HINCRBYFLOAT)
 *   s:<session>  running session amount     tools  SET of tools ever used     last  time of the last action (ms)
 *   score        HASH {score, factors, updated_at}  (kept by DELETE counters)
 *
 * Resolution (epoch minutes and hours, UTC): the 1 h window is the current minute and the 59 before it (every
 * call younger than 59 min counts, none older than 60 min); the 24 h windows are the current hour and the 23
 * before it (every call younger than 23 h counts, none older than 24 h). A record prunes the fields of the
 * hashes it writes that left their window, so each stays far under Redis' listpack limit (128 entries by
 * default) and keeps that compact encoding. Every key expires 25 h after the agent's last record (tools and
 * score: 30 days).
 *
 * Upgrade: the store before this one kept every call in sorted sets (`a`, `t:<tool>`, `v`, `amt`, scored
 * by time in ms). The first snapshot or record of an agent that still has one folds its members of the
 * window into the buckets inside the same script and unlinks it; so nothing is lost and nothing counted
 * twice, and a `t:<tool>` zset is folded when that tool is next evaluated (or expires as before).
 *
 * Redis unreachable: a read needed by the policy throws DependencyUnavailableError so the gateway's
 * failure mode applies.
 */
import { type BehavioralInput, DependencyUnavailableError, type Redis } from '@agw/shared';
import { ANOMALY_MODEL, type AnomalyFactors } from './anomaly-score';

export const KEY_PREFIX = 'agw:beh:';
const MINUTE_MS = 60 * 1000;
const HOUR_MS = 3600 * 1000;
const TTL_S = 25 * 3600;
const LONG_TTL_S = 30 * 24 * 3600;

/** input.behavioral of the policy: the decision contract's type (agw.decision.v1.Behavioral as an object) */
export type Behavioral = BehavioralInput;

export interface ActionFacts {
  /** the decision's action id (identifies the call; the counters keep counts only, not ids) */
  actionId: string;
  tool: string;
  sessionId: string;
  /** params.amount when it is a number */
  amount: number | null;
  /** the decision carried at least one violation finding other than violation_cooldown_active */
  violation: boolean;
}

export interface AnomalyView {
  score: number;
  factors: AnomalyFactors | Record<string, never>;
  updatedAt: string;
}

const COOLDOWN_RULE = 'violation_cooldown_active';
export const countsAsViolation = (findings: Array<{ id: string; kind: string }>) => findings.some((f) => f.kind === 'violation' && f.id !== COOLDOWN_RULE);

/**
 * The bucket helpers both scripts share. Windows: minute fields `m:<n>` with n > nowMin - 60, hour fields
 * `h:<n>` with n > nowHour - 24 (later fields count too, as later members of a sorted set did: a writer whose
 * clock is a little ahead).
 *
 * tally(key, nowMin, nowHour, prune): the 1 h and 24 h sums of a bucket hash and the values of its hour
 * fields in the window (the amounts, summed by the caller as JS numbers); with prune, HDELs the fields that
 * left their window.
 *
 * fold(old, new, ...): the upgrade from the sorted-set store. Counts per bucket by ZCOUNT (O(log n) each: a
 * busy agent's set of millions folds in 84 lookups); members later than the current minute and, for
 * amounts, every member of the window are read (the amount is in the member "<action>:<amount>"). Then
 * UNLINK (freed off the main thread) and the new key's TTL.
 */
const BUCKETS_LUA = `
local MIN, HOUR = ${MINUTE_MS}, ${HOUR_MS}
local function ms(x) return string.format('%.0f', x) end
local function tally(key, nowMin, nowHour, prune)
  local kv = redis.call('HGETALL', key)
  local m1, h24, values, stale = 0, 0, {}, {}
  for i = 1, #kv, 2 do
    local f = kv[i]
    local at = tonumber(string.sub(f, 3))
    if string.sub(f, 1, 1) == 'm' then
      if at > nowMin - 60 then m1 = m1 + tonumber(kv[i + 1]) else stale[#stale + 1] = f end
    elseif at > nowHour - 24 then
      h24 = h24 + tonumber(kv[i + 1])
      values[#values + 1] = kv[i + 1]
    else
      stale[#stale + 1] = f
    end
  end
  if prune and #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  return m1, h24, values
end
local function fold(old, new, nowMin, nowHour, minutes, amounts, ttl)
  local sums = {}
  local function add(f, x) if x ~= 0 then sums[f] = (sums[f] or 0) + x end end
  local function each(from)
    local r = redis.call('ZRANGEBYSCORE', old, from, '+inf', 'WITHSCORES')
    local i = 1
    return function()
      if i > #r then return nil end
      local member, at = r[i], tonumber(r[i + 1])
      i = i + 2
      return member, at
    end
  end
  if amounts then
    for member, at in each(ms((nowHour - 23) * HOUR)) do
      add('h:' .. math.floor(at / HOUR), tonumber(string.match(member, '[^:]*$')) or 0)
    end
  else
    for h = nowHour - 23, nowHour do add('h:' .. h, redis.call('ZCOUNT', old, ms(h * HOUR), '(' .. ms((h + 1) * HOUR))) end
    if minutes then
      for m = nowMin - 59, nowMin do add('m:' .. m, redis.call('ZCOUNT', old, ms(m * MIN), '(' .. ms((m + 1) * MIN))) end
    end
    for _, at in each(ms((nowMin + 1) * MIN)) do
      if minutes then add('m:' .. math.floor(at / MIN), 1) end
      local h = math.floor(at / HOUR)
      if h > nowHour then add('h:' .. h, 1) end
    end
  end
  for f, x in pairs(sums) do
    if amounts then redis.call('HINCRBYFLOAT', new, f, string.format('%.17g', x)) else redis.call('HINCRBY', new, f, x) end
  end
  redis.call('UNLINK', old)
  if redis.call('EXISTS', new) == 1 then redis.call('EXPIRE', new, ttl) end
end
-- the sorted sets of the store before buckets, if the agent still has any: old a, t:<tool>, v, amt -> b:...
local function upgrade(olds, news, nowMin, nowHour, ttl)
  if redis.call('EXISTS', olds[1], olds[2], olds[3], olds[4]) == 0 then return end
  for i = 1, 4 do
    if redis.call('EXISTS', olds[i]) == 1 then fold(olds[i], news[i], nowMin, nowHour, i == 1, i == 4, ttl) end
  end
end
`;

/**
 * KEYS b:a, b:t:<tool>, b:v, b:amt, score, last, s:<session>|b:amt, then the old zsets a, t:<tool>, v, amt;
 * ARGV now minute, now hour, has session, TTL
 */
const SNAPSHOT_SCRIPT = `${BUCKETS_LUA}
local nowMin, nowHour = tonumber(ARGV[1]), tonumber(ARGV[2])
upgrade({KEYS[8], KEYS[9], KEYS[10], KEYS[11]}, {KEYS[1], KEYS[2], KEYS[3], KEYS[4]}, nowMin, nowHour, ARGV[4])
local out = {}
out[1], out[2] = tally(KEYS[1], nowMin, nowHour, false)
local _, t24h = tally(KEYS[2], nowMin, nowHour, false)
local _, v24h = tally(KEYS[3], nowMin, nowHour, false)
out[3], out[4] = t24h, v24h
out[5] = redis.call('HGET', KEYS[5], 'score')
out[6] = redis.call('GET', KEYS[6])
if ARGV[3] == '1' then
  out[7] = redis.call('GET', KEYS[7])
else
  local _, _, amounts = tally(KEYS[7], nowMin, nowHour, false)
  out[7] = amounts
end
return out
`;

/**
 * anomaly-score.ts's anomalyScore in Lua, so the decision's record writes the new score in the same script
 * (one round trip instead of two). The same IEEE-754 double operations in the same order; JS Math.round as
 * floor plus a half-up step (exact, unlike floor(x + 0.5)); numbers written as JS writes these values (every
 * one is a count or a multiple of 1e-4: at most four decimals, trailing zeros dropped). The JSON keys in
 * AnomalyFactors order. Checked against anomalyScore over a grid and random inputs (behavior-store.test.ts).
 * M: minBaselinePerHour, burstSpan, minSample, establishedActions, weights burst, violations, newTool.
 */
const ANOMALY_LUA = `
local function jsnum(x)
  if x == 0 then return '0' end
  local s = string.format('%.4f', x)
  s = string.gsub(s, '0+$', '')
  s = string.gsub(s, '%.$', '')
  return s
end
local function r4(x)
  local y = x * 10000
  local f = math.floor(y)
  if y - f >= 0.5 then f = f + 1 end
  return f / 10000
end
local function clamp(x) return math.min(1, math.max(0, x)) end
local function anomaly(a1h, a24h, v24h, isNewTool, M)
  local baseline = math.max((a24h - a1h) / 23, M[1])
  local burst = clamp((a1h / baseline - 1) / M[2])
  local vr = clamp(v24h / math.max(a24h, M[3]))
  local nt = 0
  if isNewTool and a24h >= M[4] then nt = 1 end
  local score = 1 - (1 - M[5] * burst) * (1 - M[6] * vr) * (1 - M[7] * nt)
  local factors = '{"burst":' .. jsnum(r4(burst)) .. ',"violation_ratio":' .. jsnum(r4(vr)) .. ',"new_tool":' .. jsnum(nt)
    .. ',"baseline_per_hour":' .. jsnum(r4(baseline)) .. ',"action_count_1h":' .. jsnum(a1h) .. ',"action_count_24h":' .. jsnum(a24h)
    .. ',"violation_count_24h":' .. jsnum(v24h) .. '}'
  return jsnum(r4(clamp(score))), factors
end
`;
const M = ANOMALY_MODEL;
/** the model's constants as the scripts' last ARGVs (one source: anomaly-score.ts) */
const MODEL_ARGS = [M.minBaselinePerHour, M.burstSpan, M.minSample, M.establishedActions, M.weights.burst, M.weights.violations, M.weights.newTool].map(String);
const modelFrom = (first: number) => `{${MODEL_ARGS.map((_, i) => `tonumber(ARGV[${first + i}])`).join(', ')}}`;

/** Test hook: KEYS none; ARGV a1h, a24h, v24h, new tool 0/1, model; returns {score, factors JSON} as the record script writes them. */
export const ANOMALY_CHECK_SCRIPT = `${ANOMALY_LUA}
local s, f = anomaly(tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1', ${modelFrom(5)})
return {s, f}
`;
export const ANOMALY_MODEL_ARGS = MODEL_ARGS;

/**
 * The decision's writes, then the new anomaly score (HSET, EXPIRE). KEYS b:a, b:t:<tool>, b:v, b:amt, tools,
 * last, score, s:<session>|b:amt, then the old zsets a, t:<tool>, v, amt; ARGV now ms, now minute, now hour,
 * violation 0/1, amount|'', has session, TTL, long TTL, tool, updated_at (ISO), then the model (MODEL_ARGS).
 * Counts after this decision's increments: 1 h and 24 h of all calls, 24 h of the tool; violations and
 * amounts before it (what pass 2 saw).
 */
const RECORD_SCRIPT = `${ANOMALY_LUA}${BUCKETS_LUA}
local nowMin, nowHour = tonumber(ARGV[2]), tonumber(ARGV[3])
local minute, hour = 'm:' .. ARGV[2], 'h:' .. ARGV[3]
local hasSession = ARGV[6] == '1'
upgrade({KEYS[9], KEYS[10], KEYS[11], KEYS[12]}, {KEYS[1], KEYS[2], KEYS[3], KEYS[4]}, nowMin, nowHour, ARGV[7])
local score = redis.call('HGET', KEYS[7], 'score')
local last = redis.call('GET', KEYS[6])
local amounts
if hasSession then
  amounts = redis.call('GET', KEYS[8])
else
  local _, _, values = tally(KEYS[4], nowMin, nowHour, true)
  amounts = values
end
redis.call('HINCRBY', KEYS[1], minute, 1)
redis.call('HINCRBY', KEYS[1], hour, 1)
local a1h, a24h = tally(KEYS[1], nowMin, nowHour, true)
redis.call('HINCRBY', KEYS[2], hour, 1)
local _, t24h = tally(KEYS[2], nowMin, nowHour, true)
local _, vBefore = tally(KEYS[3], nowMin, nowHour, true)
if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[3], hour, 1) end
local newTool = redis.call('SADD', KEYS[5], ARGV[9])
redis.call('SET', KEYS[6], ARGV[1], 'EX', ARGV[7])
if ARGV[5] ~= '' then
  if hasSession then redis.call('INCRBYFLOAT', KEYS[8], ARGV[5]) else redis.call('HINCRBYFLOAT', KEYS[4], hour, ARGV[5]) end
end
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[7]) end
if hasSession then redis.call('EXPIRE', KEYS[8], ARGV[7]) end
redis.call('EXPIRE', KEYS[5], ARGV[8])
local v24h = vBefore
if ARGV[4] == '1' then v24h = v24h + 1 end
local newScore, factors = anomaly(a1h, a24h, v24h, newTool == 1, ${modelFrom(11)})
redis.call('HSET', KEYS[7], 'score', newScore, 'factors', factors, 'updated_at', ARGV[10])
redis.call('EXPIRE', KEYS[7], ARGV[8])
return {score, last, amounts, vBefore, newTool, a1h, a24h, t24h}
`;

/**
 * A violation of a call already recorded as one without (`recordForPass2`): the violation bucket, then the
 * anomaly score as RECORD_SCRIPT would have written it with the violation (the counts as they are now, this
 * call's new-tool flag). KEYS b:a, b:v, score; ARGV now minute, now hour, TTL, long TTL, new tool 0/1,
 * updated_at (ISO), then the model (MODEL_ARGS).
 */
const VIOLATION_SCRIPT = `${ANOMALY_LUA}${BUCKETS_LUA}
local nowMin, nowHour = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('HINCRBY', KEYS[2], 'h:' .. ARGV[2], 1)
redis.call('EXPIRE', KEYS[2], ARGV[3])
local a1h, a24h = tally(KEYS[1], nowMin, nowHour, false)
local _, v24h = tally(KEYS[2], nowMin, nowHour, false)
local newScore, factors = anomaly(a1h, a24h, v24h, ARGV[5] == '1', ${modelFrom(7)})
redis.call('HSET', KEYS[3], 'score', newScore, 'factors', factors, 'updated_at', ARGV[6])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 1
`;

type Script = (...args: string[]) => Promise<unknown>;

export class BehaviorStore {
  /** the scripts above, sent as EVALSHA (ioredis loads them on first use) */
  private readonly scripts: Record<'agwBehaviorSnapshot' | 'agwBehaviorRecord' | 'agwBehaviorViolation', Script>;

  constructor(private readonly redis: Redis) {
    redis.defineCommand('agwBehaviorSnapshot', { numberOfKeys: 11, lua: SNAPSHOT_SCRIPT });
    redis.defineCommand('agwBehaviorRecord', { numberOfKeys: 12, lua: RECORD_SCRIPT });
    redis.defineCommand('agwBehaviorViolation', { numberOfKeys: 3, lua: VIOLATION_SCRIPT });
    this.scripts = redis as unknown as BehaviorStore['scripts'];
  }

  private key(tenantId: string, agentId: string, suffix: string): string {
    return `${KEY_PREFIX}${tenantId}:${agentId}:${suffix}`;
  }

  /** the bucket hashes (all, the tool's, violations, amounts), then the sorted sets they replaced (upgrade) */
  private counterKeys(tenantId: string, agentId: string, tool: string): string[] {
    const k = (s: string) => this.key(tenantId, agentId, s);
    return [k('b:a'), k(`b:t:${tool}`), k('b:v'), k('b:amt'), k('a'), k(`t:${tool}`), k('v'), k('amt')];
  }

  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw new DependencyUnavailableError(`behavioral store (Redis) unavailable: ${what}`, { cause: e });
    }
  }

  /**
   * What pass 2 sees, read without recording anything: counts include the call being evaluated (violations:
   * earlier decisions only). Live evaluation reads this through `recordForPass2`, which records the call
   * in the same script; this read alone is the reference the tests hold it to.
   */
  async snapshot(tenantId: string, agentId: string, tool: string, sessionId: string, nowMs: number): Promise<Behavioral> {
    const k = (s: string) => this.key(tenantId, agentId, s);
    const [a, t, v, amt, ...olds] = this.counterKeys(tenantId, agentId, tool);
    // one round trip and one command (a Lua script): ioredis' per-command cost was the policy service's
    // largest item under load (docs/history/performance-2026.md)
    const res = await this.run('read', async () =>
      (await this.scripts.agwBehaviorSnapshot(
        a,
        t,
        v,
        amt,
        k('score'),
        k('last'),
        sessionId ? k(`s:${sessionId}`) : amt,
        ...olds,
        String(Math.floor(nowMs / MINUTE_MS)),
        String(Math.floor(nowMs / HOUR_MS)),
        sessionId ? '1' : '0',
        String(TTL_S),
      )) as unknown[],
    );
    // the call being evaluated counts (it is recorded right after the decision)
    return toBehavioral([Number(res[0]) + 1, Number(res[1]) + 1, Number(res[2]) + 1, ...res.slice(3)], nowMs, Boolean(sessionId));
  }

  /**
   * Records a decision, its violation included, and recomputes the anomaly score, in one script call.
   * Returns the behavioral data as pass 2 would have seen it at decision time. Live evaluation records
   * before it knows the decision (`recordForPass2`, then `countViolation`); this one-call form is what that
   * pair is held to (behavior-store.test.ts) and writes an agent's history in one step.
   */
  async record(tenantId: string, agentId: string, f: ActionFacts, nowMs: number): Promise<Behavioral> {
    return (await this.recorded(tenantId, agentId, f, nowMs)).behavioral;
  }

  /**
   * What pass 2 sees and the call's record in one script call, instead of a snapshot before the decision and
   * a record after it: the call is recorded as one without a violation, and the answer is what `snapshot`
   * would have read (this call counted; violations, score, last action and amounts before it). A decision
   * that then carries a violation adds it with `countViolation` (this answer's `newTool`), which leaves the
   * counters and the score as `record` with the violation would have. A governed call without a violation,
   * the common case, costs one Redis call instead of two (docs/history/performance-2026.md).
   */
  async recordForPass2(tenantId: string, agentId: string, f: Omit<ActionFacts, 'violation'>, nowMs: number): Promise<{ behavioral: Behavioral; newTool: boolean }> {
    return this.recorded(tenantId, agentId, { ...f, violation: false }, nowMs);
  }

  /** The violation of a decision whose call `recordForPass2` recorded (same `nowMs`), and the new score. */
  async countViolation(tenantId: string, agentId: string, newTool: boolean, nowMs: number): Promise<void> {
    const k = (s: string) => this.key(tenantId, agentId, s);
    await this.run('write', () =>
      this.scripts.agwBehaviorViolation(
        k('b:a'),
        k('b:v'),
        k('score'),
        String(Math.floor(nowMs / MINUTE_MS)),
        String(Math.floor(nowMs / HOUR_MS)),
        String(TTL_S),
        String(LONG_TTL_S),
        newTool ? '1' : '0',
        new Date(nowMs).toISOString(),
        ...MODEL_ARGS,
      ),
    );
  }

  private async recorded(tenantId: string, agentId: string, f: ActionFacts, nowMs: number): Promise<{ behavioral: Behavioral; newTool: boolean }> {
    const k = (s: string) => this.key(tenantId, agentId, s);
    const [a, t, v, amt, ...olds] = this.counterKeys(tenantId, agentId, f.tool);
    return this.run('write', async () => {
      const r = (await this.scripts.agwBehaviorRecord(
        a,
        t,
        v,
        amt,
        k('tools'),
        k('last'),
        k('score'),
        f.sessionId ? k(`s:${f.sessionId}`) : amt,
        ...olds,
        String(nowMs),
        String(Math.floor(nowMs / MINUTE_MS)),
        String(Math.floor(nowMs / HOUR_MS)),
        f.violation ? '1' : '0',
        f.amount === null ? '' : String(f.amount),
        f.sessionId ? '1' : '0',
        String(TTL_S),
        String(LONG_TTL_S),
        f.tool,
        new Date(nowMs).toISOString(),
        ...MODEL_ARGS,
      )) as unknown[];
      // r: 0 score (before this decision), 1 last, 2 session amount | amounts, 3 violations before this one,
      // 4 new tool, 5 1h, 6 24h, 7 tool 24h; the new score is written by the script itself (ANOMALY_LUA)
      return { behavioral: toBehavioral([Number(r[5]), Number(r[6]), r[7], Number(r[3]), r[0], r[1], r[2]], nowMs, Boolean(f.sessionId)), newTool: Number(r[4]) === 1 };
    });
  }

  async anomaly(tenantId: string, agentId: string): Promise<AnomalyView> {
    const h = await this.run('read', () => this.redis.hgetall(this.key(tenantId, agentId, 'score')));
    if (!h || !h.score) return { score: 0, factors: {}, updatedAt: '' };
    return { score: Number(h.score), factors: h.factors ? JSON.parse(h.factors) : {}, updatedAt: h.updated_at ?? '' };
  }

  /** Removes the agent's history; `keepScore` keeps the anomaly score (DELETE .../counters). */
  async clear(tenantId: string, agentId: string, keepScore: boolean): Promise<number> {
    const pattern = `${KEY_PREFIX}${escapeGlob(tenantId)}:${escapeGlob(agentId)}:*`;
    const scoreKey = this.key(tenantId, agentId, 'score');
    return this.run('clear', async () => {
      let cursor = '0';
      let removed = 0;
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        const doomed = keys.filter((key) => !(keepScore && key === scoreKey));
        if (doomed.length) removed += await this.redis.del(...doomed);
      } while (cursor !== '0');
      return removed;
    });
  }
}

function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

function toBehavioral(r: unknown[], nowMs: number, hasSession: boolean): Behavioral {
  const [a1h, a24h, tool24h, v24h, score, last, amounts] = r;
  let sessionTotal = 0;
  if (hasSession) sessionTotal = Number(amounts ?? 0);
  else if (Array.isArray(amounts)) for (const m of amounts as string[]) sessionTotal += Number(m) || 0;
  return {
    action_count_1h: Number(a1h),
    action_count_24h: Number(a24h),
    tool_count_24h: Number(tool24h),
    violation_count_24h: Number(v24h),
    anomaly_score: score === null || score === undefined ? 0 : Number(score),
    last_action_seconds_ago: last ? Math.max(0, Math.round((nowMs - Number(last)) / 1000)) : -1,
    session_total_amount: Math.round(sessionTotal * 100) / 100,
  };
}
