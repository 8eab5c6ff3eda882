/**
 * Publishes each committed decision on JetStream (`decisions.<tenant>.<kind>`). A publish that fails is
 * kept in memory and retried in the background, so a NATS hiccup never fails a tool call that is
 * already audited; the audit record stays the source of truth.
 */
import { randomUUID } from 'node:crypto';
import { type Bus, type DecisionEvent, type DecisionKind, type Logger, publishEvent, subjects } from '@agw/shared';

export class DecisionPublisher {
  private readonly retry: Array<{ subject: string; event: DecisionEvent; attempts: number }> = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
  ) {}

  async publish(e: Omit<DecisionEvent, 'event_id'>): Promise<void> {
    const event: DecisionEvent = { event_id: randomUUID(), ...e };
    const subject = subjects.decision(this.bus.prefix, e.tenant_id, e.kind as DecisionKind);
    try {
      await publishEvent(this.bus, subject, event);
    } catch (err) {
      this.logger.warn({ err, action_id: e.action_id }, 'decision publish failed; will retry');
      this.retry.push({ subject, event, attempts: 1 });
      this.schedule();
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), 1000);
    this.timer.unref();
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    const pending = this.retry.splice(0);
    for (const p of pending) {
      try {
        await publishEvent(this.bus, p.subject, p.event);
      } catch {
        p.attempts++;
        this.retry.push(p);
      }
    }
    if (this.retry.length) this.schedule();
  }

  pendingCount(): number {
    return this.retry.length;
  }
}
