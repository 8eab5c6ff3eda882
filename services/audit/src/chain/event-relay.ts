/**
 * Publishes the decision events that appends wrote to the outbox (event_outbox, in the record's
 * transaction), off the caller's path:
 *  - right after each committed batch, the batch's events are published on JetStream together (@agw/shared
 *    BatchPublisher: one publish each, the acks awaited together; the message id is the event id, so a
 *    second publish of the same event is dropped by the stream), and the rows of the acked ones are deleted
 *    a moment later in one statement;
 *  - a sweep every second publishes what is still in the outbox after a few seconds (the bus was down, or
 *    a replica stopped between commit and publish), rows locked with SKIP LOCKED so replicas share the work
 *    (`EventOutboxRepository.sweep`, the sweep DecisionPublisher's relay runs for the gateway's and the managed
 *    service's rows).
 * The rows written here are the audit service's (`event_outbox.owner` 'audit', migration 0024): the
 * gateway's and the managed service's relays (@agw/shared DecisionPublisher) take only their own rows, and
 * this sweep only these. An audit replica that died between commit and publish leaves its rows to the sweep
 * of any other audit replica, or of itself once restarted (the first sweep runs a second after start).
 * After a failed publish the immediate path pauses for a second (events stay in the outbox for the sweep).
 */
import { BatchPublisher, type Bus, type Db, EventOutboxRepository, type Logger, decisionSubjectRoots, publishEvent } from '@agw/shared';
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
  private readonly outbox: EventOutboxRepository;

  constructor(
    private readonly bus: Bus,
    db: Db,
    private readonly logger: Logger,
    opts: EventRelayOptions = {},
  ) {
    this.o = { deleteEveryMs: 100, sweepEveryMs: 1000, sweepMinAgeMs: 3000, sweepBatch: 500, ...opts };
    this.publisher = new BatchPublisher(bus.nc);
    this.outbox = new EventOutboxRepository(db, 'audit');
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
    const on = await this.outbox.autovacuumOn();
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
    await this.outbox.deletePublished(ids).catch((e: unknown) => {
      this.published.push(...ids);
      this.logger.debug({ reason: e instanceof Error ? e.message : String(e) }, 'outbox delete failed; retried');
    });
  }

  /** One sweep: publish events left in the outbox; returns how many reached the bus. */
  async sweep(minAgeMs = this.o.sweepMinAgeMs): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      return await this.outbox.sweep(decisionSubjectRoots(this.bus.prefix), { limit: this.o.sweepBatch, minAgeMs }, (row) => publishEvent(this.bus, row.subject, row.event));
    } catch (e) {
      this.logger.debug({ reason: e instanceof Error ? e.message : String(e) }, 'outbox sweep failed');
      return 0;
    } finally {
      this.sweeping = false;
    }
  }
}
