/**
 * Per-tenant sliding-window rate limit in Redis (a sliding log in a sorted set, updated atomically by a
 * Lua script, shared by every gateway replica). A tenant may make `burst` requests in any window of
 * `burst / rps` seconds: sustained traffic is capped at `rps`, short bursts up to `burst` pass.
 * Defaults (DEFAULT_RATE_LIMIT_RPS=50, DEFAULT_RATE_LIMIT_BURST=100) are documented in docs/configuration.md.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from '@agw/shared';

/** The sliding window: KEYS[1] the tenant's log; ARGV now, window (ms), limit, a unique member. */
const WINDOW = `
local function allow(key, now, window, limit, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count >= limit then
    return 0
  end
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window)
  return 1
end
`;

const SCRIPT = `${WINDOW}
return allow(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
`;

/**
 * Authentication and rate limit in one round trip: KEYS[1] an API key's cache entry (agw:apikey:<hash>),
 * KEYS[2] the window of the tenant this replica last saw for that key (ARGV[5]). Nil when the key is not
 * cached; {tenant, -1} when it belongs to another tenant (nothing counted); else {tenant, 0|1}, the
 * window applied exactly as SCRIPT does.
 */
const KEYED_SCRIPT = `${WINDOW}
local tenant = redis.call('GET', KEYS[1])
if not tenant then
  return false
end
if tenant ~= ARGV[5] then
  return {tenant, -1}
end
return {tenant, allow(KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])}
`;

export interface RateLimit {
  rps: number;
  burst: number;
}

type Script = (...args: Array<string | number>) => Promise<unknown>;
const windowMsOf = (limit: RateLimit) => Math.max(1, Math.round((limit.burst / limit.rps) * 1000));
const windowKey = (tenantId: string) => `agw:rl:${tenantId}`;

export class RateLimiter {
  /** the scripts above, sent as EVALSHA (ioredis loads them on first use) */
  private readonly scripts: Record<'agwRateLimit' | 'agwApiKeyRateLimit', Script>;

  constructor(private readonly redis: Redis) {
    redis.defineCommand('agwRateLimit', { numberOfKeys: 1, lua: SCRIPT });
    redis.defineCommand('agwApiKeyRateLimit', { numberOfKeys: 2, lua: KEYED_SCRIPT });
    this.scripts = redis as unknown as RateLimiter['scripts'];
  }

  /** A limit of its own for one operation (e.g. backups: 2 per minute): `limit` requests in any `windowMs` under `key`. */
  async allowKey(key: string, limit: number, windowMs: number): Promise<boolean> {
    return (await this.scripts.agwRateLimit(key, Date.now(), windowMs, limit, randomUUID())) === 1;
  }

  /** true when the request may proceed. */
  async allow(tenantId: string, limit: RateLimit): Promise<boolean> {
    const r = await this.scripts.agwRateLimit(windowKey(tenantId), Date.now(), windowMsOf(limit), limit.burst, randomUUID());
    return r === 1;
  }

  /**
   * The tenant cached under `apiKeyCacheKey` and, when it is `expectedTenant`, whether `limit` lets its
   * request proceed (counted exactly as `allow` counts). tenantId null: the key is not cached (nothing
   * counted); allowed undefined: the key belongs to another tenant (nothing counted).
   */
  async resolveAndAllow(apiKeyCacheKey: string, expectedTenant: string, limit: RateLimit): Promise<{ tenantId: string | null; allowed?: boolean }> {
    const r = (await this.scripts.agwApiKeyRateLimit(apiKeyCacheKey, windowKey(expectedTenant), Date.now(), windowMsOf(limit), limit.burst, randomUUID(), expectedTenant)) as
      | [string, number]
      | null;
    if (!r) return { tenantId: null };
    return { tenantId: r[0], allowed: r[1] === -1 ? undefined : r[1] === 1 };
  }
}
