/**
 * Webhook delivery log and test delivery: a thin HTTP adapter over the webhook service (gRPC). The
 * deliveries themselves never pass through here; they follow decision events on NATS JetStream.
 *
 * - GET  /webhooks/deliveries?limit=&status=&action_id=&event=  the caller's deliveries, newest first
 * - GET  /webhooks/deliveries/{delivery_id}                      one delivery with every attempt
 * - POST /webhooks/test  body `{"event": "webhook.test"}` (optional; or action.allowed | action.denied |
 *   action.pending | action.pending_approval): sends a signed sample event to the configured webhook_url,
 *   answers after attempt 1 with the delivery (a failed attempt is retried on the normal schedule).
 */
import type { webhook } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { AuditFeature } from '../../features/audit.feature';
import { addPaths, optionalJsonBody, pathParam, queryParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { isUuid, uuidParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

export const TEST_DELIVERY_EVENTS = ['webhook.test', 'action.allowed', 'action.denied', 'action.pending', 'action.pending_approval'] as const;
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

const listQuery = z.object({
  limit: z.coerce.number({ error: 'limit must be an integer' }).int('limit must be an integer').min(1, 'limit must be at least 1').max(500, 'limit must be at most 500').default(50),
  status: z.enum(DELIVERY_STATUSES).optional(),
  action_id: z.string().refine(isUuid, 'action_id must be a UUID').optional(),
  event: z.string().min(1).max(64).optional(),
});

const testBody = z.object({ event: z.enum(TEST_DELIVERY_EVENTS).default('webhook.test') }).strict();

export const deliverySchema = z
  .object({
    delivery_id: z.string(),
    event: z.string(),
    action_id: z.string().nullable(),
    url: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    test: z.boolean(),
    created_at: timestamp(),
    next_attempt_at: timestamp().nullable(),
    completed_at: timestamp().nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    attempt_log: z.array(
      z.object({ attempt: z.number().int(), started_at: timestamp(), duration_ms: z.number(), status_code: z.number().int().nullable(), outcome: z.string(), error: z.string().nullable() }),
    ),
  })
  .meta({ id: 'WebhookDelivery' });
const deliveriesResponse = z.object({ deliveries: z.array(deliverySchema), count: z.number().int() });

/** A delivery as the API shows it. */
export function presentDelivery(d: webhook.Delivery): z.infer<typeof deliverySchema> {
  return {
    delivery_id: d.delivery_id,
    event: d.event,
    action_id: d.action_id || null,
    url: d.url,
    status: d.status as (typeof DELIVERY_STATUSES)[number],
    attempts: d.attempts,
    test: d.test,
    created_at: d.created_at,
    next_attempt_at: d.next_attempt_at || null,
    completed_at: d.completed_at || null,
    last_status_code: d.last_status_code || null,
    last_error: d.last_error || null,
    attempt_log: d.attempt_log.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at,
      duration_ms: a.duration_ms,
      status_code: a.status_code || null,
      outcome: a.outcome,
      error: a.error || null,
    })),
  };
}

export function webhookRoutes(d: Pick<AuditFeature, 'webhook'>): Router {
  const r = Router();
  r.get('/webhooks/deliveries', async (req, res) => {
    const q = parseWith(listQuery, { limit: req.query.limit, status: req.query.status, action_id: req.query.action_id, event: req.query.event }, 'query');
    const { deliveries } = await d.webhook.listDeliveries({
      tenant_id: authOf(req).tenantId,
      limit: q.limit,
      status: q.status ?? '',
      action_id: q.action_id ?? '',
      event: q.event ?? '',
    });
    reply(res, deliveriesResponse, { deliveries: deliveries.map(presentDelivery), count: deliveries.length });
  });
  r.get('/webhooks/deliveries/:delivery_id', async (req, res) => {
    const id = uuidParam(req.params.delivery_id, 'Webhook delivery');
    reply(res, deliverySchema, presentDelivery(await d.webhook.getDelivery({ tenant_id: authOf(req).tenantId, delivery_id: id })));
  });
  r.post('/webhooks/test', async (req, res) => {
    const body = parseWith(testBody, req.body ?? {}, 'body');
    reply(res, deliverySchema, presentDelivery(await d.webhook.testDelivery({ tenant_id: authOf(req).tenantId, event: body.event })));
  });
  return r;
}

addPaths({
  '/webhooks/deliveries': {
    get: {
      summary: "The caller's webhook deliveries, newest first, with every attempt",
      parameters: [
        queryParam('limit', { type: 'integer', minimum: 1, maximum: 500, default: 50 }),
        queryParam('status', { type: 'string', enum: [...DELIVERY_STATUSES] }),
        queryParam('action_id'),
        queryParam('event'),
      ],
      responses: { 200: response('deliveries', deliveriesResponse), 422: errors[422]('invalid query parameter') },
    },
  },
  '/webhooks/deliveries/{delivery_id}': {
    get: { parameters: [pathParam('delivery_id', { type: 'string', format: 'uuid' })], responses: { 200: response('the delivery with every attempt', deliverySchema), 404: errors[404]('unknown or another tenant’s delivery') } },
  },
  '/webhooks/test': {
    post: {
      summary: 'Send a signed sample event to the configured webhook_url now; answers after attempt 1',
      requestBody: optionalJsonBody(testBody),
      responses: {
        200: response('the delivery', deliverySchema),
        409: errors[409]('no webhook_url configured'),
        422: errors[422]('unknown event'),
        502: errors[502]('webhook service unreachable'),
      },
    },
  },
});
