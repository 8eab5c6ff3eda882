/** Prometheus metrics: one registry per process, default Node metrics included. */
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';
import { storeRequests } from './store-requests';

export { Counter, Gauge, Histogram, Registry, Summary };

export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  registerStoreRequests(registry);
  return registry;
}

/** The requests this process sent to each store (store-requests.ts), read at scrape time. */
function registerStoreRequests(registry: Registry): void {
  new Counter({
    name: 'agw_store_requests_total',
    help: 'Requests this process sent to a store: Postgres statements, Redis commands (a script call is one), NATS messages published',
    labelNames: ['store'],
    registers: [registry],
    collect() {
      const n = storeRequests();
      this.reset();
      for (const store of ['postgres', 'redis', 'nats'] as const) if (n[store] > 0) this.inc({ store }, n[store]);
    },
  });
  new Counter({
    name: 'agw_nats_messages_received_total',
    help: 'NATS messages delivered to this process (events, acks, replies)',
    registers: [registry],
    collect() {
      this.reset();
      const n = storeRequests().natsReceived;
      if (n > 0) this.inc(n);
    },
  });
}
