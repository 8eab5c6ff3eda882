/**
 * Publishes committed facts on JetStream: decisions (`decisions.<tenant>.<kind>`) and session events
 * (`sessions.<tenant>.<kind>`). A publish that fails never fails the operation (the audit record is already
 * committed and stays the source of truth): the event is written to the Postgres outbox and a relay,
 * running in every replica of a publishing service, publishes it once the bus is back (same event id, so
 * JetStream deduplicates a publish that did land). If even the outbox cannot take it, it is retried from memory.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger';
import { type Bus, publishEvent } from './bus';
import { type DecisionEvent, type DecisionKind, type SessionEvent, streams, subjects } from './events';
import type { EventOutboxRepository } from './event-outbox.repository';

export class DecisionPublisher {
  private readonly memory: Array<{ subject: string; event: { event_id: string } }> = [];
  private timer?: NodeJS.Timeout;
  private relaying = false;

  constructor(
    private readonly bus: Bus,
    private readonly outbox: EventOutboxRepository,
    private readonly logger: Logger,
    private readonly relayEveryMs = 1000,
  ) {}

  /** A decision; `event_id` may be given (a deterministic id makes a retried publish a duplicate JetStream drops). */
  async publish(e: Omit<DecisionEvent, 'event_id'> & { event_id?: string }): Promise<void> {
    const event: DecisionEvent = { ...e, event_id: e.event_id ?? randomUUID() };
    await this.send(subjects.decision(this.bus.prefix, e.tenant_id, e.kind as DecisionKind, e.session_id), event, e.action_id);
  }

  /** A managed-session event (`sessions.<tenant>.<kind>`: interrupted, anomaly_detected, ...). */
  async publishSession(e: Omit<SessionEvent, 'event_id'> & { event_id?: string }): Promise<void> {
    const event: SessionEvent = { ...e, event_id: e.event_id ?? randomUUID() };
    await this.send(subjects.session(this.bus.prefix, e.tenant_id, e.kind), event, e.session_id);
  }

  private async send(subject: string, event: { event_id: string }, about: string): Promise<void> {
    try {
      await publishEvent(this.bus, subject, event);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.logger.warn({ about, subject, reason }, 'event publish failed; kept in the outbox');
      await this.outbox.add(subject, event, reason).catch(() => this.memory.push({ subject, event }));
    }
  }

  /** Start the background relay (outbox and memory); stop() ends it. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.relay(), this.relayEveryMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One relay pass; returns how many events reached the bus. */
  async relay(): Promise<number> {
    if (this.relaying) return 0;
    this.relaying = true;
    try {
      let n = 0;
      for (const m of this.memory.splice(0)) {
        try {
          await publishEvent(this.bus, m.subject, m.event);
          n++;
        } catch {
          this.memory.push(m);
        }
      }
      // every subject root of the streams this publisher writes (`decisions.`, `nohook.decisions.`, `sessions.`)
      const { decisions, sessions } = streams(this.bus.prefix);
      const roots = [...decisions.subjects, ...sessions.subjects].map((s) => s.slice(0, -'>'.length));
      n += await this.outbox.sweep(roots, { limit: 100 }, (row) => publishEvent(this.bus, row.subject, row.event));
      return n;
    } catch (e) {
      this.logger.debug({ reason: e instanceof Error ? e.message : String(e) }, 'outbox relay pass failed');
      return 0;
    } finally {
      this.relaying = false;
    }
  }
}
