/** Step 1 of the pipeline, applied to every authenticated tenant request: the tenant's sliding window. */
import type { NextFunction, Request, Response } from 'express';
import { RateLimitError } from '@agw/shared';
import type { GatewayMetrics } from '../metrics';
import type { RateLimiter } from '../pipeline/rate-limiter';
import type { SettingsService } from '../tenants/settings.service';
import { authOf } from './request-context';

export function tenantRateLimit(d: { rateLimiter: RateLimiter; settings: SettingsService; metrics: GatewayMetrics }) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { tenantId } = authOf(req);
    const limit = await d.settings.rateLimit(tenantId);
    let allowed = true;
    try {
      // already counted by authenticate (ApiKeyService.authenticate) when it could, in the same round trip
      const counted: unknown = res.locals.rateLimitAllowed;
      allowed = typeof counted === 'boolean' ? counted : await d.rateLimiter.allow(tenantId, limit);
    } catch {
      // Redis down: counters may reset (DESIGN.md); governance itself is unaffected, so the request proceeds.
      allowed = true;
    }
    if (!allowed) {
      d.metrics.rateLimited.inc();
      throw new RateLimitError('rate limit exceeded', {
        error: 'rate_limit_exceeded',
        tenant_id: tenantId,
        rate_limit_rps: limit.rps,
        rate_limit_burst: limit.burst,
      });
    }
    next();
  };
}

/** Per-IP limit on the public auth endpoints (signup, login): a fixed one-minute window in Redis. */
export function ipRateLimit(d: { redis: import('@agw/shared').Redis; perMinute: number; name: string }) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    const key = `agw:iprl:${d.name}:${req.ip}:${Math.floor(Date.now() / 60000)}`;
    const n = await d.redis
      .multi()
      .incr(key)
      .expire(key, 61)
      .exec()
      .then((r) => Number(r?.[0]?.[1] ?? 0))
      .catch(() => 0);
    if (n > d.perMinute) throw new RateLimitError('Too many attempts from this address; try again in a minute', undefined, 60 - (Math.floor(Date.now() / 1000) % 60));
    next();
  };
}
