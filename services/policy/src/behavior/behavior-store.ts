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
import { type AnomalyFactors, anomalyScore } from './anomaly-score';

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

export class BehaviorStore {
  constructor(private readonly redis: Redis) {}

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
    const res = await this.run('read', async () => {
      const m = this.redis.multi();
      m.zcount(k('a'), `(${nowMs - HOUR_MS}`, '+inf');
      m.zcount(k('a'), `(${nowMs - DAY_MS}`, '+inf');
      m.zcount(k(`t:${tool}`), `(${nowMs - DAY_MS}`, '+inf');
      m.zcount(k('v'), `(${nowMs - DAY_MS}`, '+inf');
      m.hget(k('score'), 'score');
      m.get(k('last'));
      if (sessionId) m.get(k(`s:${sessionId}`));
      else m.zrangebyscore(k('amt'), `(${nowMs - DAY_MS}`, '+inf');
      const out = await m.exec();
      if (!out) throw new Error('transaction aborted');
      return out.map(([err, v]) => {
        if (err) throw err;
        return v;
      });
    });
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
      const m = this.redis.multi();
      // reads first: the state before this decision
      m.hget(k('score'), 'score'); // 0
      m.get(k('last')); // 1
      if (f.sessionId) m.get(k(`s:${f.sessionId}`));
      else m.zrangebyscore(k('amt'), old, '+inf'); // 2
      m.zadd(k('a'), nowMs, f.actionId);
      m.zremrangebyscore(k('a'), '-inf', nowMs - DAY_MS);
      m.zadd(k(`t:${f.tool}`), nowMs, f.actionId);
      m.zremrangebyscore(k(`t:${f.tool}`), '-inf', nowMs - DAY_MS);
      m.zremrangebyscore(k('v'), '-inf', nowMs - DAY_MS); // 7
      m.zcount(k('v'), old, '+inf'); // 8: violations before this one
      if (f.violation) m.zadd(k('v'), nowMs, f.actionId);
      else m.zcard(k('v')); // 9
      m.sadd(k('tools'), f.tool); // 10: 1 when new
      m.set(k('last'), String(nowMs), 'EX', TTL_S);
      if (f.amount !== null) {
        if (f.sessionId) m.incrbyfloat(k(`s:${f.sessionId}`), f.amount);
        else m.zadd(k('amt'), nowMs, `${f.actionId}:${f.amount}`);
      } else m.echo('');
      m.zremrangebyscore(k('amt'), '-inf', nowMs - DAY_MS);
      m.zcount(k('a'), `(${nowMs - HOUR_MS}`, '+inf'); // 14
      m.zcount(k('a'), old, '+inf'); // 15
      m.zcount(k(`t:${f.tool}`), old, '+inf'); // 16
      for (const s of ['a', `t:${f.tool}`, 'v', 'amt']) m.expire(k(s), TTL_S);
      if (f.sessionId) m.expire(k(`s:${f.sessionId}`), TTL_S);
      m.expire(k('tools'), LONG_TTL_S);
      const out = await m.exec();
      if (!out) throw new Error('transaction aborted');
      const r = out.map(([err, v]) => {
        if (err) throw err;
        return v;
      });
      const violationsBefore = Number(r[8]);
      const actions1h = Number(r[14]);
      const actions24h = Number(r[15]);
      const { score, factors } = anomalyScore({ actions1h, actions24h, violations24h: violationsBefore + (f.violation ? 1 : 0), newTool: Number(r[10]) === 1 });
      await this.redis
        .multi()
        .hset(k('score'), { score: String(score), factors: JSON.stringify(factors), updated_at: new Date(nowMs).toISOString() })
        .expire(k('score'), LONG_TTL_S)
        .exec();
      return toBehavioral([actions1h, actions24h, r[16], violationsBefore, r[0], r[1], r[2]], nowMs, Boolean(f.sessionId));
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
