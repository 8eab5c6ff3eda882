/** The gateway's own Prometheus metrics (served on /api/metrics and the ops port). */
import { Counter, Gauge, Histogram, type Registry, Summary } from '@agw/shared';

export function createGatewayMetrics(registry: Registry) {
  return {
    httpRequests: new Counter({ name: 'agw_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    httpDuration: new Histogram({
      name: 'agw_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    // the autoscaling signal of the Kubernetes HPA (deploy/k8s: per-pod average through prometheus-adapter)
    httpInFlight: new Gauge({ name: 'agw_http_requests_in_flight', help: 'HTTP requests being served by this gateway right now (tool calls included)', registers: [registry] }),
    decisions: new Counter({ name: 'agw_decisions_total', help: 'Governance decisions by outcome and stage', labelNames: ['decision', 'stage'], registers: [registry] }),
    policyEvalMs: new Summary({
      name: 'agw_policy_eval_ms',
      help: 'Policy service evaluation time (ms, as measured inside the policy service); quantile 0.5 is the median',
      percentiles: [0.5, 0.9, 0.99],
      // a sliding window of 10 minutes that moves every 5: each observation goes into every age bucket's
      // t-digest, and five of them cost 2 % of a loaded gateway's CPU (issue 26's profile)
      maxAgeSeconds: 600,
      ageBuckets: 2,
      registers: [registry],
    }),
    policyUnavailable: new Counter({ name: 'agw_policy_unavailable_total', help: 'Calls decided by a failure mode', labelNames: ['mode'], registers: [registry] }),
    governedInFlight: new Gauge({ name: 'agw_governed_calls_in_flight', help: 'Governed calls this gateway process is serving right now (bounded by GATEWAY_MAX_IN_FLIGHT)', registers: [registry] }),
    admissionLimit: new Gauge({ name: 'agw_admission_limit', help: 'The adaptive limit of governed calls in flight in this gateway process (AIMD between 32 and GATEWAY_MAX_IN_FLIGHT)', registers: [registry] }),
    shed: new Counter({ name: 'agw_overload_shed_total', help: 'Governed calls shed with 503 before any work, by the limit that was reached (process | tenant)', labelNames: ['limit'], registers: [registry] }),
    rateLimited: new Counter({ name: 'agw_rate_limited_total', help: 'Requests refused by the tenant rate limit', registers: [registry] }),
  };
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
