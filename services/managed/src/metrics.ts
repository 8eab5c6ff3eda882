/** The managed service's Prometheus metrics. */
import { Counter, Gauge, type Registry } from 'prom-client';

export function createManagedMetrics(registry: Registry, activeConsumers: () => number, activeSessions: () => Promise<number>) {
  return {
    sessionsCreated: new Counter({ name: 'agw_managed_sessions_created_total', help: 'managed sessions created', registers: [registry] }),
    sessionsEnded: new Counter({ name: 'agw_managed_sessions_ended_total', help: 'managed sessions ended, by end state', labelNames: ['status'], registers: [registry] }),
    eventsConsumed: new Counter({ name: 'agw_managed_session_events_consumed_total', help: 'platform session events processed by this replica', registers: [registry] }),
    interrupts: new Counter({ name: 'agw_managed_session_interrupts_total', help: 'session interrupts, by trigger', labelNames: ['trigger'], registers: [registry] }),
    sessionsActive: new Gauge({
      name: 'agw_managed_sessions_active',
      help: 'managed sessions in state active, fleet-wide (all tenants)',
      registers: [registry],
      async collect() {
        this.set(await activeSessions().catch(() => 0));
      },
    }),
    consumers: new Gauge({
      name: 'agw_managed_session_consumers',
      help: 'session event consumers running in this replica',
      registers: [registry],
      collect() {
        this.set(activeConsumers());
      },
    }),
  };
}
export type ManagedMetrics = ReturnType<typeof createManagedMetrics>;
