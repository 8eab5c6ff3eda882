/**
 * The depth of the event outbox (decision events committed with their records and not yet on NATS), read
 * from Postgres at scrape time; every replica reports the same fleet-wide number. It stays near zero while
 * NATS is up (events are published right after each commit); growth means events wait for the bus.
 */
import { type Db, EventOutboxRepository } from '@agw/shared';
import { Gauge, type Registry } from 'prom-client';

export function registerOutboxGauge(registry: Registry, db: Db): void {
  const outbox = new EventOutboxRepository(db, 'audit');
  new Gauge({
    name: 'agw_event_outbox_pending',
    help: 'Decision and session events committed but not yet published on NATS (event_outbox rows)',
    registers: [registry],
    async collect() {
      this.set(await outbox.pending().catch(() => 0));
    },
  });
}
