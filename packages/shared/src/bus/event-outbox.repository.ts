/**
 * The owner of event_outbox, the decision and session events committed but not yet on the bus: the only
 * queries on it but the inserts of the chain's append functions, which write the audit service's events in
 * their records' transaction (packages/shared/src/db/functions/audit-append.sql.ts). `add` keeps a failed
 * publish of the gateway or the managed service; both relays publish through one `sweep`
 * (services/audit/src/chain/event-relay.ts, and DecisionPublisher in event-publisher.ts). Events are not
 * tenant-owned rows to read back: no tenant filter needed.
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
 * service for the events it commits with their records (the append functions leave the column's default),
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
   * One sweep of this owner's pending events whose subject starts with one of `subjectRoots` (roots of this
   * fleet's streams, stream prefix included), oldest first, at most `limit`, only rows at least `minAgeMs` old
   * (0: every row), in one transaction: the rows are locked with SKIP LOCKED (replicas share the work and never
   * relay the same event twice at once) and published together (`publish`, once per row); the published ones
   * are deleted, the others keep their row with one attempt more and the error. Returns how many were published.
   */
  async sweep(subjectRoots: readonly string[], o: { limit: number; minAgeMs?: number }, publish: (row: OutboxRow) => Promise<unknown>): Promise<number> {
    const like = subjectRoots.map((root) => `${root.replace(/[%_\\]/g, '\\$&')}%`);
    const minAgeMs = o.minAgeMs ?? 0;
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<OutboxRow>`
        SELECT id, subject, event FROM event_outbox
        WHERE owner = ${this.owner} AND subject LIKE ANY(${like}::text[])
          ${minAgeMs > 0 ? sql`AND created_at < now() - make_interval(secs => ${minAgeMs / 1000})` : sql``}
        ORDER BY id LIMIT ${o.limit} FOR UPDATE SKIP LOCKED`.execute(trx);
      if (!rows.length) return 0;
      const settled = await Promise.allSettled(rows.map((r) => publish(r)));
      const done = rows.filter((_, i) => settled[i].status === 'fulfilled').map((r) => r.id);
      if (done.length) await sql`DELETE FROM event_outbox WHERE id = ANY(${done}::bigint[])`.execute(trx);
      const failed = rows.flatMap((r, i) => {
        const s = settled[i];
        return s.status === 'rejected' ? [{ id: r.id, error: s.reason instanceof Error ? s.reason.message.slice(0, 500) : String(s.reason) }] : [];
      });
      if (failed.length) {
        await sql`UPDATE event_outbox o SET attempts = o.attempts + 1, last_error = f.error
          FROM unnest(${failed.map((f) => f.id)}::bigint[], ${failed.map((f) => f.error)}::text[]) AS f(id, error) WHERE o.id = f.id`.execute(trx);
      }
      return done.length;
    });
  }

  /**
   * Delete rows whose events reached the bus (right after their commit: services/audit/src/chain/event-relay.ts);
   * rows a sweep holds right now are skipped (it deletes them itself).
   */
  async deletePublished(ids: readonly number[]): Promise<void> {
    if (!ids.length) return;
    await sql`DELETE FROM event_outbox WHERE id IN (SELECT id FROM event_outbox WHERE id = ANY(${ids}::bigint[]) FOR UPDATE SKIP LOCKED)`.execute(this.db);
  }

  /**
   * Whether autovacuum runs on the outbox (on for the server, not turned off for the table). The outbox is a
   * queue table, a row inserted and deleted per decision: without autovacuum its dead rows pile up.
   */
  async autovacuumOn(): Promise<boolean> {
    const { rows } = await sql<{ server: string; table_options: string[] | null }>`
      SELECT current_setting('autovacuum') AS server, (SELECT reloptions FROM pg_class WHERE oid = 'event_outbox'::regclass) AS table_options`.execute(this.db);
    return rows[0]?.server === 'on' && !(rows[0]?.table_options ?? []).includes('autovacuum_enabled=false');
  }

  /** Every row still waiting, whoever owns it (the fleet's backlog, the audit service's gauge). */
  async pending(): Promise<number> {
    const r = await this.db.selectFrom('event_outbox').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
