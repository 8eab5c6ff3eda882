/**
 * Counts the HTTP requests this gateway is serving right now (`agw_http_requests_in_flight`): the
 * per-pod signal the Kubernetes HorizontalPodAutoscaler scales the gateway on (deploy/k8s, through
 * prometheus-adapter). A request counts from its arrival until its response is closed: sent, or the
 * client went away.
 */
import type { Gauge } from '@agw/shared';
import type { RequestHandler } from 'express';

export function countInFlight(gauge: Pick<Gauge, 'inc' | 'dec'>): RequestHandler {
  return (_req, res, next) => {
    gauge.inc();
    res.once('close', () => gauge.dec());
    next();
  };
}
