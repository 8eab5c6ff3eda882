/**
 * Publishes the decision events that appends wrote to the outbox (event_outbox, in the record's
 * transaction), off the caller's path:
 *  - right after each committed batch, the batch's events are published on JetStream together (@agw/shared
 *    BatchPublisher: one publish each, the acks awaited together; the message id is the event id, so a
 *    second publish of the same event is dropped by the stream), and the rows of the acked ones are deleted
 *    a moment later in one statement;
 *  - a sweep every second publishes what is still in the outbox after a few seconds (the bus was down, or
 *    a replica stopped between commit and publish), rows locked with SKIP LOCKED so replicas share the work.
 * The rows written here are the audit service's (`event_outbox.owner` 'audit', migration 0024): the
 * gateway's and the managed service's relays (@agw/shared DecisionPublisher) take only their own rows, and
 * this sweep only these. An audit replica that died between commit and publish leaves its rows to the sweep
 * of any other audit replica, or of itself once restarted (the first sweep runs a second after start).
 * After a failed publish the immediate path pauses for a second (events stay in the outbox for the sweep).
 */
import { BatchPublisher, type Bus, type Db, type Logger, decisionSubjectRoots, publishEvent } from '@agw/shared';
import { sql } from 'kysely';
import type { BatchAppended } from './audit-record.repository';

export interface EventRelayOptions {
  /** how often published rows are deleted, ms */
  deleteEveryMs?: number;
  /** how often the outbox is swept for events left behind, ms */
  sweepEveryMs?: number;
  /** rows younger than this are left to the immediate path, ms */
  sweepMinAgeMs?: number;
  sweepBatch?: number;
}

export class EventRelay {
  private published: number[] = [];
  private pausedUntil = 0;
  private timers: NodeJS.Timeout[] = [];
  private sweeping = false;
  private readonly o: Required<EventRelayOptions>;
  private readonly publisher: BatchPublisher;

  constructor(
    private readonly bus: Bus,
    private readonly db: Db,
    private readonly logger: Logger,
    opts: EventRelayOptions = {},
  ) {
    this.o = { deleteEveryMs: 100, sweepEveryMs: 1000, sweepMinAgeMs: 3000, sweepBatch: 500, ...opts };
    this.publisher = new BatchPublisher(bus.nc);
  }

  /** The subject prefix of this fleet's decision events (the stream prefix, if any). */
  get prefix(): string {
    return this.bus.prefix;
  }

  /** Publish a committed batch's events now (never throws, never delays the batch's callers). */
  committed(batch: readonly BatchAppended[]): void {
    if (Date.now() < this.pausedUntil) return;
    const items = batch.filter((a): a is BatchAppended & { outboxId: number; event: NonNullable<BatchAppended['event']> } => a.outboxId !== null && Boolean(a.event));
    if (!items.length) return;
    void this.publisher.publishAll(items.map((a) => a.event)).then((results) => {
      let failed: Error | null = null;
      results.forEach((err, i) => {
        if (err) failed ??= err;
        else this.published.push(items[i].outboxId);
      });
      if (failed) {
        if (Date.now() >= this.pausedUntil) this.logger.warn({ reason: (failed as Error).message }, 'decision publish failed; the outbox keeps it');
        this.pausedUntil = Date.now() + 1000;
      }
    });
  }

  start(): void {
    if (this.timers.length) return;
    this.timers = [setInterval(() => void this.flushDeletes(), this.o.deleteEveryMs), setInterval(() => void this.sweep(), this.o.sweepEveryMs)];
    for (const t of this.timers) t.unref();
    void this.checkAutovacuum().catch(() => undefined);
  }

  /**
   * The outbox is a queue table, a row inserted and deleted per decision: without autovacuum its dead rows
   * pile up and every sweep and delete walks them (a bench database held 265,883 after ten runs, and
   * Postgres made 24-41 system calls per governed call instead of 2: docs/history/performance-2026.md). Warns once at
   * start when autovacuum is off for the server or for this table; answers whether it is on.
   */
  async checkAutovacuum(): Promise<boolean> {
    const { rows } = await sql<{ server: string; table_options: string[] | null }>`
      SELECT current_setting('autovacuum') AS server, (SELECT reloptions FROM pg_class WHERE oid = 'event_outbox'::regclass) AS table_options`.execute(this.db);
    const on = rows[0]?.server === 'on' && !(rows[0]?.table_options ?? []).includes('autovacuum_enabled=false');
    if (!on) this.logger.warn({ table: 'event_outbox' }, 'autovacuum is off: the event outbox (a row inserted and deleted per decision) will fill with dead rows and slow every call; turn autovacuum on, or VACUUM event_outbox regularly');
    return on;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    // publishes still awaiting their acks finish (or time out) as the bus drains; their rows stay otherwise
    await this.flushDeletes();
  }

  /** Delete the rows whose events reached the bus (rows a relay holds right now are skipped: it deletes them itself). */
  async flushDeletes(): Promise<void> {
    if (!this.published.length) return;
    const ids = this.published;
    this.published = [];
    await sql`DELETE FROM event_outbox WHERE id IN (SELECT id FROM event_outbox WHERE id = ANY(${ids}::bigint[]) FOR UPDATE SKIP LOCKED)`
      .execute(this.db)
      .catch((e: unknown) => {
        this.published.push(...ids);
        this.logger.debug({ reason: e instanceof Error ? e.message : String(e) }, 'outbox delete failed; retried');
      });
  }

  /** One sweep: publish events left in the outbox; returns how many reached the bus. */
  async sweep(minAgeMs = this.o.sweepMinAgeMs): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    const like = decisionSubjectRoots(this.bus.prefix).map((root) => `${root}%`);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ id: string; subject: string; event: { event_id: string } }>`
          SELECT id, subject, event FROM event_outbox
          WHERE owner = 'audit' AND subject LIKE ANY(${like}::text[]) AND created_at < now() - make_interval(secs => ${minAgeMs / 1000})
          ORDER BY id LIMIT ${this.o.sweepBatch} FOR UPDATE SKIP LOCKED`.execute(trx);
        if (!rows.length) return 0;
        const settled = await Promise.allSettled(rows.map((r) => publishEvent(this.bus, r.subject, r.event)));
        const done = rows.filter((_, i) => settled[i].status === 'fulfilled').map((r) => r.id);
        if (done.length) await sql`DELETE FROM event_outbox WHERE id = ANY(${done}::bigint[])`.execute(trx);
        const failed = rows.length - done.length;
        if (failed) await sql`UPDATE event_outbox SET attempts = attempts + 1, last_error = 'publish failed (audit relay)' WHERE id = ANY(${rows.filter((_, i) => settled[i].status === 'rejected').map((r) => r.id)}::bigint[])`.execute(trx);
        return done.length;
      });
    } catch (e) {
      this.logger.debug({ reason: e instanceof Error ? e.message : String(e) }, 'outbox sweep failed');
      return 0;
    } finally {
      this.sweeping = false;
    }
  }
}
