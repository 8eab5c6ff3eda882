/** Prometheus metrics: one registry per process, default Node metrics included. */
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry, Summary };

export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
