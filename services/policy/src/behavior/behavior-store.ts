/**
 * Behavioral counters per tenant and agent in Redis (keys `agw:beh:<tenant>:<agent>:*`), written on every
 * decision and read for pass 2. Sliding 24 h windows are sorted sets scored by time, trimmed on write.
 *
 *   a            ZSET action ids           t:<tool>   ZSET action ids of one tool
 *   v            ZSET decisions with a violation (violation_cooldown_active alone not counted)
 *   amt          ZSET "<action>:<amount>"  s:<session> running session amount
 *   tools        SET of tools ever used    last       time of the last action (ms)
 *   score        HASH {score, factors, updated_at}  (kept by DELETE counters)
 *
 * Redis unreachable: a read needed by the policy throws DependencyUnavailableError so the gateway's
 * failure mode applies.
 */
import { DependencyUnavailableError, type Redis } from '@agw/shared';
import { ANOMALY_MODEL, type AnomalyFactors } from './anomaly-score';

export const KEY_PREFIX = 'agw:beh:';
const DAY_MS = 24 * 3600 * 1000;
const HOUR_MS = 3600 * 1000;
const TTL_S = 25 * 3600;
const LONG_TTL_S = 30 * 24 * 3600;

export interface Behavioral {
  action_count_1h: number;
  action_count_24h: number;
  tool_count_24h: number;
  violation_count_24h: number;
  anomaly_score: number;
  /** -1 when the agent has no earlier action */
  last_action_seconds_ago: number;
  session_total_amount: number;
}

export interface ActionFacts {
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

/** KEYS a, t:<tool>, v, score, last, s:<session>|amt; ARGV hour cut "(ms", day cut "(ms", has session */
const SNAPSHOT_SCRIPT = `
local out = {}
out[1] = redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf')
out[2] = redis.call('ZCOUNT', KEYS[1], ARGV[2], '+inf')
out[3] = redis.call('ZCOUNT', KEYS[2], ARGV[2], '+inf')
out[4] = redis.call('ZCOUNT', KEYS[3], ARGV[2], '+inf')
out[5] = redis.call('HGET', KEYS[4], 'score')
out[6] = redis.call('GET', KEYS[5])
if ARGV[3] == '1' then out[7] = redis.call('GET', KEYS[6]) else out[7] = redis.call('ZRANGEBYSCORE', KEYS[6], ARGV[2], '+inf') end
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
 * The decision's writes, in the order of the MULTI this replaced, then the new anomaly score (HSET, EXPIRE:
 * what the separate score script did). KEYS a, t:<tool>, v, amt, tools, last, score, s:<session>|amt; ARGV
 * now, action id, violation 0/1, amount|'', has session, hour cut "(ms", day cut "(ms", day cut ms, TTL,
 * long TTL, tool, amount member|'', updated_at (ISO), then the model (MODEL_ARGS).
 */
const RECORD_SCRIPT = `${ANOMALY_LUA}
local now, id, dayCut, dayOld = ARGV[1], ARGV[2], ARGV[8], ARGV[7]
local hasSession = ARGV[5] == '1'
local score = redis.call('HGET', KEYS[7], 'score')
local last = redis.call('GET', KEYS[6])
local amounts
if hasSession then amounts = redis.call('GET', KEYS[8]) else amounts = redis.call('ZRANGEBYSCORE', KEYS[4], dayOld, '+inf') end
redis.call('ZADD', KEYS[1], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', dayCut)
redis.call('ZADD', KEYS[2], now, id)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', dayCut)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', dayCut)
local vBefore = redis.call('ZCOUNT', KEYS[3], dayOld, '+inf')
if ARGV[3] == '1' then redis.call('ZADD', KEYS[3], now, id) end
local newTool = redis.call('SADD', KEYS[5], ARGV[11])
redis.call('SET', KEYS[6], now, 'EX', ARGV[9])
if ARGV[4] ~= '' then
  if hasSession then redis.call('INCRBYFLOAT', KEYS[8], ARGV[4]) else redis.call('ZADD', KEYS[4], now, ARGV[12]) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', dayCut)
local a1h = redis.call('ZCOUNT', KEYS[1], ARGV[6], '+inf')
local a24h = redis.call('ZCOUNT', KEYS[1], dayOld, '+inf')
local t24h = redis.call('ZCOUNT', KEYS[2], dayOld, '+inf')
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[9]) end
if hasSession then redis.call('EXPIRE', KEYS[8], ARGV[9]) end
redis.call('EXPIRE', KEYS[5], ARGV[10])
local v24h = vBefore
if ARGV[3] == '1' then v24h = v24h + 1 end
local newScore, factors = anomaly(a1h, a24h, v24h, newTool == 1, ${modelFrom(14)})
redis.call('HSET', KEYS[7], 'score', newScore, 'factors', factors, 'updated_at', ARGV[13])
redis.call('EXPIRE', KEYS[7], ARGV[10])
return {score, last, amounts, vBefore, newTool, a1h, a24h, t24h}
`;

type Script = (...args: string[]) => Promise<unknown>;

export class BehaviorStore {
  /** the scripts above, sent as EVALSHA (ioredis loads them on first use) */
  private readonly scripts: Record<'agwBehaviorSnapshot' | 'agwBehaviorRecord', Script>;

  constructor(private readonly redis: Redis) {
    redis.defineCommand('agwBehaviorSnapshot', { numberOfKeys: 6, lua: SNAPSHOT_SCRIPT });
    redis.defineCommand('agwBehaviorRecord', { numberOfKeys: 8, lua: RECORD_SCRIPT });
    this.scripts = redis as unknown as BehaviorStore['scripts'];
  }

  private key(tenantId: string, agentId: string, suffix: string): string {
    return `${KEY_PREFIX}${tenantId}:${agentId}:${suffix}`;
  }

  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw new DependencyUnavailableError(`behavioral store (Redis) unavailable: ${what}`, { cause: e });
    }
  }

  /** What pass 2 sees: counts include the call being evaluated (violations: earlier decisions only). */
  async snapshot(tenantId: string, agentId: string, tool: string, sessionId: string, nowMs: number): Promise<Behavioral> {
    const k = (s: string) => this.key(tenantId, agentId, s);
    // one round trip and one command (a Lua script) instead of a MULTI of eight: ioredis' per-command cost
    // was the policy service's largest item under load (docs/performance.md)
    const res = await this.run('read', async () =>
      (await this.scripts.agwBehaviorSnapshot(
        k('a'),
        k(`t:${tool}`),
        k('v'),
        k('score'),
        k('last'),
        sessionId ? k(`s:${sessionId}`) : k('amt'),
        `(${nowMs - HOUR_MS}`,
        `(${nowMs - DAY_MS}`,
        sessionId ? '1' : '0',
      )) as unknown[],
    );
    // the call being evaluated counts (it is recorded right after the decision)
    return toBehavioral([Number(res[0]) + 1, Number(res[1]) + 1, Number(res[2]) + 1, ...res.slice(3)], nowMs, Boolean(sessionId));
  }

  /**
   * Records a decision and recomputes the anomaly score. Returns the behavioral data as pass 2 would have
   * seen it at decision time (kept with the decision so replay is exact even when pass 2 did not run).
   */
  async record(tenantId: string, agentId: string, f: ActionFacts, nowMs: number): Promise<Behavioral> {
    const k = (s: string) => this.key(tenantId, agentId, s);
    const old = `(${nowMs - DAY_MS}`;
    return this.run('write', async () => {
      // the same commands as one Lua script (atomic like the MULTI it replaces, one command on the wire)
      const r = (await this.scripts.agwBehaviorRecord(
        k('a'),
        k(`t:${f.tool}`),
        k('v'),
        k('amt'),
        k('tools'),
        k('last'),
        k('score'),
        f.sessionId ? k(`s:${f.sessionId}`) : k('amt'),
        String(nowMs),
        f.actionId,
        f.violation ? '1' : '0',
        f.amount === null ? '' : String(f.amount),
        f.sessionId ? '1' : '0',
        `(${nowMs - HOUR_MS}`,
        old,
        String(nowMs - DAY_MS),
        String(TTL_S),
        String(LONG_TTL_S),
        f.tool,
        f.amount === null ? '' : `${f.actionId}:${f.amount}`,
        new Date(nowMs).toISOString(),
        ...MODEL_ARGS,
      )) as unknown[];
      // r: 0 score (before this decision), 1 last, 2 session amount | amounts, 3 violations before this one,
      // 4 new tool, 5 1h, 6 24h, 7 tool 24h; the new score is written by the script itself (ANOMALY_LUA)
      return toBehavioral([Number(r[5]), Number(r[6]), r[7], Number(r[3]), r[0], r[1], r[2]], nowMs, Boolean(f.sessionId));
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
  else if (Array.isArray(amounts)) for (const m of amounts as string[]) sessionTotal += Number(m.slice(m.lastIndexOf(':') + 1)) || 0;
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
