/**
 * Per request, once its answer is sent: the HTTP metrics (`agw_http_requests_total`, the duration
 * histogram by route) and one access-log line. The line holds the path without the query string (it may
 * carry a verification token), never headers or bodies: only the fields below, so it is written without the
 * redaction walk (`fixedFieldLogger`), which would find nothing in it and cost half of it.
 */
import { type Logger, fixedFieldLogger } from '@agw/shared';
import type { RequestHandler } from 'express';
import type { GatewayMetrics } from '../metrics';

export function observeRequests(metrics: Pick<GatewayMetrics, 'httpDuration' | 'httpRequests'>, logger: Logger): RequestHandler {
  const access = fixedFieldLogger(logger);
  return (req, res, next) => {
    const end = metrics.httpDuration.startTimer({ method: req.method });
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      const seconds = end({ route });
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      access.info({ reqId: req.id, method: req.method, path: req.path, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10, tenantId: req.auth?.tenantId }, 'request');
    });
    next();
  };
}
