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
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
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

/** A delivery as the API shows it. */
export function presentDelivery(d: webhook.Delivery) {
  return {
    delivery_id: d.deliveryId,
    event: d.event,
    action_id: d.actionId || null,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    test: d.test,
    created_at: d.createdAt,
    next_attempt_at: d.nextAttemptAt || null,
    completed_at: d.completedAt || null,
    last_status_code: d.lastStatusCode || null,
    last_error: d.lastError || null,
    attempt_log: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      started_at: a.startedAt,
      duration_ms: a.durationMs,
      status_code: a.statusCode || null,
      outcome: a.outcome,
      error: a.error || null,
    })),
  };
}

export function webhookRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/webhooks/deliveries', async (req, res) => {
    const q = parseWith(listQuery, { limit: req.query.limit, status: req.query.status, action_id: req.query.action_id, event: req.query.event }, 'query');
    const { deliveries } = await d.webhook.listDeliveries({
      tenantId: authOf(req).tenantId,
      limit: q.limit,
      status: q.status ?? '',
      actionId: q.action_id ?? '',
      event: q.event ?? '',
    });
    res.json({ deliveries: deliveries.map(presentDelivery), count: deliveries.length });
  });
  r.get('/webhooks/deliveries/:delivery_id', async (req, res) => {
    const id = uuidParam(req.params.delivery_id, 'Webhook delivery');
    res.json(presentDelivery(await d.webhook.getDelivery({ tenantId: authOf(req).tenantId, deliveryId: id })));
  });
  r.post('/webhooks/test', async (req, res) => {
    const body = parseWith(testBody, req.body ?? {}, 'body');
    res.json(presentDelivery(await d.webhook.testDelivery({ tenantId: authOf(req).tenantId, event: body.event })));
  });
  return r;
}

const deliveryShape =
  '{delivery_id, event, action_id, url, status (pending|delivered|failed), attempts, test, created_at, next_attempt_at, completed_at, last_status_code, last_error, attempt_log: [{attempt, started_at, duration_ms, status_code, outcome, error}]}';

addPaths({
  '/webhooks/deliveries': {
    get: {
      summary: "The caller's webhook deliveries, newest first, with every attempt",
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
        { name: 'status', in: 'query', schema: { type: 'string', enum: [...DELIVERY_STATUSES] } },
        { name: 'action_id', in: 'query', schema: { type: 'string' } },
        { name: 'event', in: 'query', schema: { type: 'string' } },
      ],
      responses: { 200: { description: `{deliveries: [${deliveryShape}], count}` }, 422: { description: 'invalid query parameter' } },
    },
  },
  '/webhooks/deliveries/{delivery_id}': {
    get: {
      parameters: [{ name: 'delivery_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      responses: { 200: { description: deliveryShape }, 404: { description: 'unknown or another tenant’s delivery' } },
    },
  },
  '/webhooks/test': {
    post: {
      summary: 'Send a signed sample event to the configured webhook_url now; answers after attempt 1',
      requestBody: { required: false, content: { 'application/json': { schema: z.toJSONSchema(testBody, { io: 'input' }) } } },
      responses: {
        200: { description: `the delivery: ${deliveryShape}` },
        409: { description: 'no webhook_url configured' },
        422: { description: 'unknown event' },
        502: { description: 'webhook service unreachable' },
      },
    },
  },
});
