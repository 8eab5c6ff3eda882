/**
 * Pipeline step 2, before any policy: the tenant's hard safety blocks from the settings key
 * `gateway_constraints` (docs/policy.md, "Gateway constraints"):
 *  - blocked_domains: a domain (or a subdomain of it) in any URL or e-mail address anywhere in params;
 *  - daily_caps: calls per agent per UTC day (all tools, and per tool);
 *  - cooldown: after `violations` denied calls within `window_seconds`, the agent is blocked for
 *    `cooldown_seconds`.
 * A hit is a 403 with its own violation id (severity high), audited like any decision. Counters live
 * in Redis (`agw:gc:<tenant>:<agent>:*`); Redis is only touched when caps or a cooldown are configured.
 */
import { type Redis, StoreUnavailableError } from '@agw/shared';
import { z } from 'zod';
import type { ConstraintHit, GatewayConstraints } from './hooks';
import type { ToolCallRequest } from './tool-call.schema';

export const CONSTRAINT_VIOLATIONS = {
  blockedDomain: 'gateway_blocked_domain',
  dailyCap: 'gateway_daily_cap_exceeded',
  cooldown: 'gateway_cooldown_active',
} as const;

const domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9-]{1,63}\.)*[a-z0-9-]{1,63}$/, 'must be a domain name such as example.com');

export const gatewayConstraintsSchema = z
  .object({
    blocked_domains: z.array(domain).max(1000).optional(),
    daily_caps: z
      .object({
        /** calls per agent per UTC day, all tools */
        actions_per_agent: z.number().int().min(1).max(10_000_000).optional(),
        /** calls per agent per UTC day of one tool */
        per_tool: z.record(z.string().min(1).max(256), z.number().int().min(1).max(10_000_000)).optional(),
      })
      .strict()
      .optional(),
    cooldown: z
      .object({
        violations: z.number().int().min(1).max(10_000),
        window_seconds: z.number().int().min(1).max(7 * 86_400).default(3600),
        cooldown_seconds: z.number().int().min(1).max(30 * 86_400).default(900),
      })
      .strict()
      .optional(),
  })
  .strict();

export type GatewayConstraintSettings = z.output<typeof gatewayConstraintsSchema>;

const URL_HOST = /\b[a-z][a-z0-9+.-]*:\/\/(?:[^\s/?#@]*@)?([^\s/?#:]+)/gi;
const EMAIL_DOMAIN = /[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;

/** Every host of a URL and domain of an e-mail address found in the strings of `value`. */
export function domainsIn(value: unknown): Set<string> {
  const out = new Set<string>();
  const visit = (v: unknown, depth: number) => {
    if (depth > 64) return;
    if (typeof v === 'string') {
      for (const m of v.matchAll(URL_HOST)) out.add(m[1].toLowerCase().replace(/\.$/, ''));
      for (const m of v.matchAll(EMAIL_DOMAIN)) out.add(m[1].toLowerCase().replace(/\.$/, ''));
    } else if (Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
    else if (v && typeof v === 'object') Object.values(v).forEach((x) => visit(x, depth + 1));
  };
  visit(value, 0);
  return out;
}

export function blockedDomain(params: unknown, blocked: string[]): string | null {
  if (!blocked.length) return null;
  for (const host of domainsIn(params)) {
    for (const d of blocked) if (host === d || host.endsWith(`.${d}`)) return host;
  }
  return null;
}

const NO_CONSTRAINTS: GatewayConstraintSettings = Object.freeze({});
/**
 * Parsed once per stored settings object: the settings service hands out the same object for every call
 * until it re-reads the tenant's settings (a change or its cache's age), which brings a new object and so
 * a new parse. A value that is not an object (or does not parse) means no constraints, as before.
 */
const parsedByValue = new WeakMap<object, GatewayConstraintSettings>();
export function parsedConstraints(value: unknown): GatewayConstraintSettings {
  if (value === undefined || value === null) return NO_CONSTRAINTS;
  if (typeof value !== 'object') return NO_CONSTRAINTS; // a string or number never parses as the object schema
  const hit = parsedByValue.get(value);
  if (hit) return hit;
  const parsed = gatewayConstraintsSchema.safeParse(value);
  const c = parsed.success ? parsed.data : NO_CONSTRAINTS;
  parsedByValue.set(value, c);
  return c;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const DAY_TTL_S = 48 * 3600;

export class RedisGatewayConstraints implements GatewayConstraints {
  /** the last parsed settings per tenant (record() is called right after check() of the same call) */
  private readonly lastSettings = new Map<string, GatewayConstraintSettings>();

  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = Date.now,
  ) {}

  private key(tenantId: string, agentId: string, suffix: string): string {
    return `agw:gc:${tenantId}:${agentId}:${suffix}`;
  }

  private async store<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      // a store, as the rate limiter's Redis is: 503 naming it, with Retry-After (docs/reliability.md)
      throw new StoreUnavailableError('Redis', 'gateway', { cause: e });
    }
  }

  async check(tenantId: string, call: ToolCallRequest, settings: Record<string, unknown>): Promise<ConstraintHit | null> {
    const c = parsedConstraints(settings.gateway_constraints);
    if (this.lastSettings.size > 10_000) this.lastSettings.clear();
    this.lastSettings.set(tenantId, c);

    const host = blockedDomain(call.params, c.blocked_domains ?? []);
    if (host) return { violation: CONSTRAINT_VIOLATIONS.blockedDomain, severity: 'high', message: `params reference the blocked domain ${host}` };

    if (!c.cooldown && !c.daily_caps) return null;
    const today = day(this.now());
    const toolCap = c.daily_caps?.per_tool?.[call.tool];
    const [cooldownTtl, actions, toolActions] = await this.store(async () => {
      const m = this.redis.multi();
      m.ttl(this.key(tenantId, call.agent_id, 'cooldown'));
      m.get(this.key(tenantId, call.agent_id, `day:${today}`));
      m.get(this.key(tenantId, call.agent_id, `day:${today}:tool:${call.tool}`));
      const r = await m.exec();
      if (!r) throw new Error('transaction aborted');
      return r.map(([err, v]) => {
        if (err) throw err;
        return v;
      });
    });
    if (c.cooldown && Number(cooldownTtl) > 0) {
      return { violation: CONSTRAINT_VIOLATIONS.cooldown, severity: 'high', message: `agent ${call.agent_id} is in cooldown after repeated violations (${cooldownTtl} s left)` };
    }
    const cap = c.daily_caps?.actions_per_agent;
    if (cap !== undefined && Number(actions ?? 0) >= cap) {
      return { violation: CONSTRAINT_VIOLATIONS.dailyCap, severity: 'high', message: `agent ${call.agent_id} reached its daily cap of ${cap} calls` };
    }
    if (toolCap !== undefined && Number(toolActions ?? 0) >= toolCap) {
      return { violation: CONSTRAINT_VIOLATIONS.dailyCap, severity: 'high', message: `agent ${call.agent_id} reached its daily cap of ${toolCap} calls of ${call.tool}` };
    }
    return null;
  }

  async record(tenantId: string, call: ToolCallRequest, outcome: { decision: string; violations: string[] }): Promise<void> {
    const c = this.lastSettings.get(tenantId);
    if (!c || (!c.cooldown && !c.daily_caps)) return;
    const blockedByCapOrCooldown = outcome.violations.some((v) => v === CONSTRAINT_VIOLATIONS.dailyCap || v === CONSTRAINT_VIOLATIONS.cooldown);
    const passedConstraints = !outcome.violations.some((v) => (Object.values(CONSTRAINT_VIOLATIONS) as string[]).includes(v));
    const nowMs = this.now();
    await this.store(async () => {
      const m = this.redis.multi();
      if (c.daily_caps && passedConstraints) {
        const k = this.key(tenantId, call.agent_id, `day:${day(nowMs)}`);
        m.incr(k).expire(k, DAY_TTL_S);
        const kt = this.key(tenantId, call.agent_id, `day:${day(nowMs)}:tool:${call.tool}`);
        m.incr(kt).expire(kt, DAY_TTL_S);
      }
      if (c.cooldown && outcome.decision === 'deny' && !blockedByCapOrCooldown) {
        const kv = this.key(tenantId, call.agent_id, 'violations');
        m.zadd(kv, nowMs, `${nowMs}:${Math.random().toString(36).slice(2)}`);
        m.zremrangebyscore(kv, '-inf', nowMs - c.cooldown.window_seconds * 1000);
        m.expire(kv, c.cooldown.window_seconds);
      }
      await m.exec();
      if (c.cooldown && outcome.decision === 'deny' && !blockedByCapOrCooldown) {
        const kv = this.key(tenantId, call.agent_id, 'violations');
        const n = await this.redis.zcard(kv);
        if (n >= c.cooldown.violations) {
          await this.redis.multi().set(this.key(tenantId, call.agent_id, 'cooldown'), '1', 'EX', c.cooldown.cooldown_seconds).del(kv).exec();
        }
      }
    });
  }
}

export function createGatewayConstraints(redis: Redis): GatewayConstraints {
  return new RedisGatewayConstraints(redis);
}
