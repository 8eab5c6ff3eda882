/**
 * Publishes each committed decision on JetStream (`decisions.<tenant>.<kind>`). A publish that fails never
 * fails the tool call (the audit record is already committed and stays the source of truth): the event is
 * written to the Postgres outbox and a relay, running in every gateway replica, publishes it once the bus
 * is back (same event id, so JetStream deduplicates a publish that did land). If even the outbox cannot
 * take it, it is retried from memory.
 */
import { randomUUID } from 'node:crypto';
import { type Bus, type DecisionEvent, type DecisionKind, type Logger, publishEvent, subjects } from '@agw/shared';
import type { EventOutboxRepository } from './event-outbox.repository';

export class DecisionPublisher {
  private readonly memory: Array<{ subject: string; event: DecisionEvent }> = [];
  private timer?: NodeJS.Timeout;
  private relaying = false;

  constructor(
    private readonly bus: Bus,
    private readonly outbox: EventOutboxRepository,
    private readonly logger: Logger,
    private readonly relayEveryMs = 1000,
  ) {}

  async publish(e: Omit<DecisionEvent, 'event_id'>): Promise<void> {
    const event: DecisionEvent = { event_id: randomUUID(), ...e };
    const subject = subjects.decision(this.bus.prefix, e.tenant_id, e.kind as DecisionKind);
    try {
      await publishEvent(this.bus, subject, event);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.logger.warn({ action_id: e.action_id, reason }, 'decision publish failed; kept in the outbox');
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
      n += await this.outbox.relay(this.bus.prefix ? `${this.bus.prefix}.decisions.` : 'decisions.', 100, (row) => publishEvent(this.bus, row.subject, row.event));
      return n;
    } catch (e) {
      this.logger.debug({ reason: e instanceof Error ? e.message : String(e) }, 'outbox relay pass failed');
      return 0;
    } finally {
      this.relaying = false;
    }
  }
}
