/** The only queries on event_outbox (events are not tenant-owned rows to read back: no tenant filter needed). */
import type { Db } from '../db/database';
import { sql } from 'kysely';

export interface OutboxRow {
  id: number;
  subject: string;
  event: { event_id: string } & Record<string, unknown>;
}

/**
 * Rows the audit service wrote with a committed record (attempts 0) are its own to publish for this long:
 * it publishes them right after the commit and deletes them within ~100 ms, and sweeps what is left after
 * the same 3 s (services/audit/src/chain/event-relay.ts). Relaying them earlier only published every event
 * a second time (dropped by the stream as a duplicate, at full cost to both ends).
 */
export const AUDIT_OWNED_OUTBOX_MS = 3000;

export class EventOutboxRepository {
  constructor(private readonly db: Db) {}

  async add(subject: string, event: { event_id: string }, error: string): Promise<void> {
    await this.db.insertInto('event_outbox').values({ subject, event: JSON.stringify(event), attempts: 1, last_error: error }).execute();
  }

  /**
   * Hand the oldest pending events under `subjectPrefix` (this fleet's stream prefix) to `publish`, a batch at a time, inside one transaction (rows the
   * audit service committed only after AUDIT_OWNED_OUTBOX_MS): rows are locked
   * with SKIP LOCKED (replicas never relay the same event twice at once), deleted when published, and
   * marked with the error otherwise. Returns how many were published.
   */
  async relay(subjectPrefix: string, limit: number, publish: (row: OutboxRow) => Promise<void>): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const rows = (await trx
        .selectFrom('event_outbox')
        .select(['id', 'subject', 'event'])
        .where('subject', 'like', `${subjectPrefix.replace(/[%_\\]/g, '\\$&')}%`)
        // a failed publish's row (attempts >= 1) at once; a row the audit service committed once it is its sweep's
        .where((eb) => eb.or([eb('attempts', '>', 0), eb('created_at', '<', sql<Date>`now() - make_interval(secs => ${AUDIT_OWNED_OUTBOX_MS / 1000})`)]))
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

  async pending(): Promise<number> {
    const r = await this.db.selectFrom('event_outbox').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
