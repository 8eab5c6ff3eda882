/** gRPC adapter of the webhook domain: translate messages, call the domain, nothing else. */
import { webhook as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, bindService } from '@agw/shared';
import type { DeliveryStatus } from '../delivery/delivery.repository';
import type { DeliveryView, WebhookDeliveries } from '../delivery/webhook-deliveries';
import { type TargetGuard, refusalOfUrl } from '../target/target-guard';

export function toMessage(v: DeliveryView): pb.Delivery {
  return {
    delivery_id: v.delivery_id,
    event: v.event,
    event_id: v.event_id,
    action_id: v.action_id ?? '',
    url: v.url,
    status: v.status,
    attempts: v.attempts,
    created_at: v.created_at,
    next_attempt_at: v.next_attempt_at ?? '',
    completed_at: v.completed_at ?? '',
    last_status_code: v.last_status_code ?? 0,
    last_error: v.last_error ?? '',
    test: v.test,
    attempt_log: v.attempt_log.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at,
      duration_ms: a.duration_ms,
      status_code: a.status_code ?? 0,
      outcome: a.outcome,
      error: a.error ?? '',
    })),
  };
}

export function webhookGrpcService(deliveries: WebhookDeliveries, guard: TargetGuard, logger: Logger): GrpcServiceBinding {
  return bindService(
    pb.WebhookServiceService,
    {
      listDeliveries: async (req) => ({
        deliveries: (
          await deliveries.list(req.tenant_id, {
            limit: req.limit,
            status: (req.status || undefined) as DeliveryStatus | undefined,
            actionId: req.action_id || undefined,
            event: req.event || undefined,
          })
        ).map(toMessage),
      }),
      getDelivery: async (req) => toMessage(await deliveries.get(req.tenant_id, req.delivery_id)),
      testDelivery: async (req) => toMessage(await deliveries.test(req.tenant_id, req.event || undefined)),
      checkTarget: async (req) => {
        const why = await refusalOfUrl(guard, req.url);
        if (why) throw InputError.field('webhook_url', why);
        return {};
      },
    },
    logger,
  );
}
