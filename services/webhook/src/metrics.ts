/** The webhook service's Prometheus metrics (on its ops port). */
import { Counter, Histogram, type Registry } from '@agw/shared';
import { Gauge } from 'prom-client';

export interface WebhookMetrics {
  eventsConsumed: Counter<'result'>;
  siemEvents: Counter<'outcome'>;
  attempts: Counter<'outcome'>;
  deliveries: Counter<'status'>;
  attemptDuration: Histogram<'outcome'>;
}

/** The backlog gauge, read from Postgres at scrape time (all replicas report the same number). */
export function registerBacklogGauge(registry: Registry, pendingCount: () => Promise<number>): void {
  new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Deliveries not final yet (waiting for their first attempt or a retry), over all tenants',
    registers: [registry],
    async collect() {
      this.set(await pendingCount());
    },
  });
}

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  return {
    siemEvents: new Counter({
      name: 'siem_export_events_total',
      help: 'Decision events of the SIEM export by outcome: delivered (the collector answered 2xx), skipped (export turned off meanwhile), or the failed attempt\'s outcome (http_error, timeout, network_error, tls_error, refused, error; redelivered later)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    eventsConsumed: new Counter({
      name: 'webhook_events_consumed_total',
      help: 'Decision events read from JetStream: enqueued (a delivery was created), duplicate (already enqueued), skipped (no webhook or not subscribed)',
      labelNames: ['result'],
      registers: [registry],
    }),
    attempts: new Counter({
      name: 'webhook_attempts_total',
      help: 'HTTP delivery attempts by outcome (success, http_error, timeout, network_error, tls_error, refused, error)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'webhook_deliveries_completed_total',
      help: 'Deliveries that reached a final status (delivered, failed)',
      labelNames: ['status'],
      registers: [registry],
    }),
    attemptDuration: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Duration of one delivery attempt, from DNS lookup to the end of the response',
      labelNames: ['outcome'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}
