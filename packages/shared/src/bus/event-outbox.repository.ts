/**
 * The queries on event_outbox of the services that publish decisions themselves (gateway, managed: each
 * its own rows, by `owner`); the audit service's rows are published and swept by
 * services/audit/src/chain/event-relay.ts. Events are not tenant-owned rows to read
 * back: no tenant filter needed.
 */
import type { Db } from '../db/database';
import { sql } from 'kysely';

export interface OutboxRow {
  id: number;
  subject: string;
  event: { event_id: string } & Record<string, unknown>;
}

/**
 * The service whose relay publishes an outbox row, set when the row is written (migration 0024): the audit
 * service for the events it commits with their records (`audit_append_batch` leaves the column's default),
 * the gateway and the managed service for their own failed publishes. A relay takes only its own service's
 * rows, so no relay publishes another's events a second time and none waits a timeout to take them; a
 * replica that died with rows pending leaves them to the next relay pass of any replica of its service
 * (the relay runs in every replica, and in a restarted one at once).
 */
export type OutboxOwner = 'audit' | 'gateway' | 'managed';

export class EventOutboxRepository {
  /** `owner`: the service this repository writes and relays rows for */
  constructor(
    private readonly db: Db,
    readonly owner: OutboxOwner,
  ) {}

  /** Keep an event whose publish failed, as this owner's. */
  async add(subject: string, event: { event_id: string }, error: string): Promise<void> {
    await this.db.insertInto('event_outbox').values({ subject, event: JSON.stringify(event), attempts: 1, last_error: error, owner: this.owner }).execute();
  }

  /**
   * Hand this owner's oldest pending events under `subjectPrefix` (this fleet's stream prefix) to `publish`,
   * a batch at a time, inside one transaction: rows are locked with SKIP LOCKED (replicas never relay the
   * same event twice at once), deleted when published, and marked with the error otherwise. Returns how
   * many were published.
   */
  async relay(subjectPrefix: string, limit: number, publish: (row: OutboxRow) => Promise<void>): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const rows = (await trx
        .selectFrom('event_outbox')
        .select(['id', 'subject', 'event'])
        .where('owner', '=', this.owner)
        .where('subject', 'like', `${subjectPrefix.replace(/[%_\\]/g, '\\$&')}%`)
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute()) as OutboxRow[];
      let published = 0;
      for (const row of rows) {
        try {
          await publish(row);
          await trx.deleteFrom('event_outbox').where('id', '=', row.id).execute();
          published++;
        } catch (e) {
          await trx
            .updateTable('event_outbox')
            .set({ attempts: sql`attempts + 1`, last_error: e instanceof Error ? e.message.slice(0, 500) : String(e) })
            .where('id', '=', row.id)
            .execute();
          break; // the bus is still down: keep the order, try again later
        }
      }
      return published;
    });
  }

  /** Every row still waiting, whoever owns it (the fleet's backlog, the audit service's gauge). */
  async pending(): Promise<number> {
    const r = await this.db.selectFrom('event_outbox').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
