/**
 * NATS adapter: the durable JetStream consumer `webhook` on the DECISIONS stream. Each event is turned into
 * a delivery row (idempotent on the event id) and then acked; a failure (Postgres down) naks it for
 * redelivery. Replicas share the durable, so each event is handled by one of them; a restarted replica
 * resumes at the first unacked event.
 */
import { type Bus, DecisionEventSchema, type Logger, type RunningConsumer, consumeDurable, streams, subjects } from '@agw/shared';
import type { WebhookDeliveries } from '../delivery/webhook-deliveries';

export const DURABLE_NAME = 'webhook';

/** The tenant of a decision subject (`[<prefix>.]decisions.<tenant>.<kind>`), or null. */
export function tenantOfDecisionSubject(prefix: string, subject: string): string | null {
  const head = `${prefix ? `${prefix}.` : ''}decisions.`;
  if (!subject.startsWith(head)) return null;
  const parts = subject.slice(head.length).split('.');
  return parts.length === 2 && parts[0] ? parts[0] : null;
}

export function consumeDecisions(bus: Bus, deliveries: Pick<WebhookDeliveries, 'enqueueDecision'> & Partial<Pick<WebhookDeliveries, 'skipsTenant'>>, logger: Logger): Promise<RunningConsumer> {
  const stream = streams(bus.prefix).decisions;
  return consumeDurable(bus, {
    stream: stream.name,
    durable: DURABLE_NAME,
    // `decisions.>` only: the decisions of tenants without a webhook URL are under `nohook.` and never sent here
    filterSubject: subjects.webhookDecisions(bus.prefix),
    schema: DecisionEventSchema,
    // a tenant whose webhook URL was removed, or the events of an older gateway that did not say: acked before any decode or schema parse
    skip: (subject) => {
      const tenant = tenantOfDecisionSubject(bus.prefix, subject);
      return tenant !== null && deliveries.skipsTenant !== undefined ? deliveries.skipsTenant(tenant) : false;
    },
    handle: async (event) => {
      await deliveries.enqueueDecision(event);
    },
    logger,
    retryDelayMs: 1000,
    ackWaitMs: 30_000,
  });
}
