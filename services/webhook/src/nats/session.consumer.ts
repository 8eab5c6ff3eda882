/**
 * NATS adapter: the durable JetStream consumer `webhook-session-events` on the SESSIONS stream
 * (`sessions.<tenant>.<kind>`; kinds that are no webhook event are skipped). Same contract as the decision
 * consumer: store the delivery, then ack.
 */
import { type Bus, type Logger, type RunningConsumer, SessionEventSchema, consumeDurable, streams, subjects } from '@agw/shared';
import type { WebhookDeliveries } from '../delivery/webhook-deliveries';

export const SESSIONS_DURABLE_NAME = 'webhook-session-events';

export function consumeSessionEvents(bus: Bus, deliveries: Pick<WebhookDeliveries, 'enqueueSessionEvent'>, logger: Logger): Promise<RunningConsumer> {
  const stream = streams(bus.prefix).sessions;
  return consumeDurable(bus, {
    stream: stream.name,
    durable: SESSIONS_DURABLE_NAME,
    filterSubject: subjects.session(bus.prefix, '*', '*'),
    schema: SessionEventSchema,
    handle: async (event) => {
      await deliveries.enqueueSessionEvent(event);
    },
    logger,
    retryDelayMs: 1000,
    ackWaitMs: 30_000,
  });
}
