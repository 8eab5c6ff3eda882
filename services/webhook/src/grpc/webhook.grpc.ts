/** gRPC adapter of the webhook domain: translate messages, call the domain, nothing else. */
import { webhook as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, implement } from '@agw/shared';
import type { DeliveryStatus } from '../delivery/delivery.repository';
import type { DeliveryView, WebhookDeliveries } from '../delivery/webhook-deliveries';
import { type TargetGuard, refusalOfUrl } from '../target/target-guard';

export function toMessage(v: DeliveryView): pb.Delivery {
  return {
    deliveryId: v.delivery_id,
    event: v.event,
    eventId: v.event_id,
    actionId: v.action_id ?? '',
    url: v.url,
    status: v.status,
    attempts: v.attempts,
    createdAt: v.created_at,
    nextAttemptAt: v.next_attempt_at ?? '',
    completedAt: v.completed_at ?? '',
    lastStatusCode: v.last_status_code ?? 0,
    lastError: v.last_error ?? '',
    test: v.test,
    attemptLog: v.attempt_log.map((a) => ({
      attempt: a.attempt,
      startedAt: a.started_at,
      durationMs: a.duration_ms,
      statusCode: a.status_code ?? 0,
      outcome: a.outcome,
      error: a.error ?? '',
    })),
  };
}

export function webhookGrpcService(deliveries: WebhookDeliveries, guard: TargetGuard, logger: Logger): GrpcServiceBinding {
  return {
    definition: pb.WebhookServiceService,
    implementation: implement(
      pb.WebhookServiceService,
      {
        listDeliveries: async (req) => ({
          deliveries: (
            await deliveries.list(req.tenantId, {
              limit: req.limit,
              status: (req.status || undefined) as DeliveryStatus | undefined,
              actionId: req.actionId || undefined,
              event: req.event || undefined,
            })
          ).map(toMessage),
        }),
        getDelivery: async (req) => toMessage(await deliveries.get(req.tenantId, req.deliveryId)),
        testDelivery: async (req) => toMessage(await deliveries.test(req.tenantId, req.event || undefined)),
        checkTarget: async (req) => {
          const why = await refusalOfUrl(guard, req.url);
          if (why) throw InputError.field('webhook_url', why);
          return {};
        },
      },
      logger,
    ),
  };
}
