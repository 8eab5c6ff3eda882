/**
 * Per-tenant sliding-window rate limit in Redis (a sliding log in a sorted set, updated atomically by a
 * Lua script, shared by every gateway replica). A tenant may make `burst` requests in any window of
 * `burst / rps` seconds: sustained traffic is capped at `rps`, short bursts up to `burst` pass.
 * Defaults (DEFAULT_RATE_LIMIT_RPS=50, DEFAULT_RATE_LIMIT_BURST=100) are documented in docs/configuration.md.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from '@agw/shared';

const SCRIPT = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  return 0
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return 1
`;

export interface RateLimit {
  rps: number;
  burst: number;
}

export class RateLimiter {
  constructor(private readonly redis: Redis) {}

  /** true when the request may proceed. */
  async allow(tenantId: string, limit: RateLimit): Promise<boolean> {
    const windowMs = Math.max(1, Math.round((limit.burst / limit.rps) * 1000));
    const r = await this.redis.eval(SCRIPT, 1, `agw:rl:${tenantId}`, Date.now(), windowMs, limit.burst, randomUUID());
    return r === 1;
  }
}
