/**
 * What the public edge exposes by profile (docs/operations.md, "What production exposes"):
 * - Prometheus metrics: in the local profile at /api/metrics as ever; in production not on the public
 *   prefix (404: scrape the ops port, GATEWAY_OPS_PORT, as the Kubernetes manifests do), unless
 *   METRICS_BEARER_TOKEN is set, then only with `Authorization: Bearer <token>` (401 otherwise);
 * - the tamper demo (/api/audit/tamper-*): absent (404) outside the local profile.
 */
import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { NotFoundError, AuthenticationError } from '@agw/shared';

type Profile = 'local' | 'production';

export function localProfileOnly(profile: Profile) {
  return (_req: Request, _res: Response, next: NextFunction): void => {
    if (profile !== 'local') throw new NotFoundError('Not found');
    next();
  };
}

export function metricsExposure(profile: Profile, bearerToken: string | undefined) {
  const expected = bearerToken ? Buffer.from(bearerToken, 'utf8') : undefined;
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (profile === 'local' && !expected) return next();
    if (!expected) throw new NotFoundError('Not found: metrics are served on the ops port in this profile');
    const given = Buffer.from(/^Bearer\s+(.+)$/i.exec(req.get('authorization') ?? '')?.[1] ?? '', 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AuthenticationError('Metrics need the metrics bearer token');
    next();
  };
}
