/**
 * NATS adapter: the durable JetStream consumer `webhook` on the DECISIONS stream. Each event is turned into
 * a delivery row (idempotent on the event id) and then acked; a failure (Postgres down) naks it for
 * redelivery. Replicas share the durable, so each event is handled by one of them; a restarted replica
 * resumes at the first unacked event.
 */
import { type Bus, DecisionEventSchema, type Logger, type RunningConsumer, consumeDurable, streams } from '@agw/shared';
import type { WebhookDeliveries } from '../delivery/webhook-deliveries';

export const DURABLE_NAME = 'webhook';

export function consumeDecisions(bus: Bus, deliveries: Pick<WebhookDeliveries, 'enqueueDecision'>, logger: Logger): Promise<RunningConsumer> {
  const stream = streams(bus.prefix).decisions;
  return consumeDurable(bus, {
    stream: stream.name,
    durable: DURABLE_NAME,
    filterSubject: stream.subjects[0],
    schema: DecisionEventSchema,
    handle: async (event) => {
      await deliveries.enqueueDecision(event);
    },
    logger,
    retryDelayMs: 1000,
    ackWaitMs: 30_000,
  });
}
