/**
 * The webhook domain: turn decision events into deliveries, read the per-tenant delivery log, run a test
 * delivery. Transport-free: the NATS consumer and the gRPC adapter call in here.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, type DecisionEvent, InputError, NotFoundError, type SessionEvent } from '@agw/shared';
import type { WebhookMetrics } from '../metrics';
import type { AttemptRow, DeliveryRepository, DeliveryRow, DeliveryStatus, ListFilter } from './delivery.repository';
import type { DeliveryWorker } from './delivery-worker';
import type { TenantWebhookRepository } from './tenant-webhook.repository';
import {
  TEST_EVENT,
  TEST_EVENTS,
  type TestEvent,
  payloadFromDecision,
  payloadFromSession,
  testPayload,
  webhookEventFor,
  webhookEventForSession,
} from './webhook-event';

/** A delivery as the log shows it. */
export interface DeliveryView {
  delivery_id: string;
  event: string;
  event_id: string;
  action_id: string | null;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  created_at: string;
  next_attempt_at: string | null;
  completed_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  test: boolean;
  attempt_log: Array<{
    attempt: number;
    started_at: string;
    duration_ms: number;
    status_code: number | null;
    outcome: string;
    error: string | null;
  }>;
}

export type EnqueueResult = 'enqueued' | 'duplicate' | 'skipped';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];
export const MAX_LIST_LIMIT = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class WebhookDeliveries {
  constructor(
    private readonly d: {
      repo: DeliveryRepository;
      tenants: TenantWebhookRepository;
      worker: DeliveryWorker;
      metrics: WebhookMetrics;
      /** the worker's lease: a test delivery is claimed by its creator for this long */
      leaseMs: number;
    },
  ) {}

  /**
   * A decision event becomes a delivery when its tenant has a webhook URL and is subscribed to the event.
   * Idempotent: a redelivered event finds its delivery and adds nothing.
   */
  async enqueueDecision(e: DecisionEvent): Promise<EnqueueResult> {
    const tenant = await this.d.tenants.cached(e.tenant_id);
    const event = tenant.url ? webhookEventFor(e.kind, tenant.events) : null;
    if (!tenant.url || !event) return this.count('skipped');
    return this.enqueue(e.tenant_id, e.event_id, event, e.action_id, tenant.url, JSON.stringify(payloadFromDecision(event, e)));
  }

  /**
   * True when the tenant has no webhook (cached settings, as enqueueDecision reads them): the consumer then
   * acks its decision events unread, counted as skipped exactly as enqueueDecision would count them.
   */
  async skipsTenant(tenantId: string): Promise<boolean> {
    if ((await this.d.tenants.cached(tenantId)).url) return false;
    this.count('skipped');
    return true;
  }

  /** A session event (interrupted) becomes a delivery for tenants subscribed to session.interrupted. */
  async enqueueSessionEvent(e: SessionEvent): Promise<EnqueueResult> {
    const tenant = await this.d.tenants.cached(e.tenant_id);
    const event = tenant.url ? webhookEventForSession(e.kind, tenant.events) : null;
    if (!tenant.url || !event) return this.count('skipped');
    const payload = payloadFromSession(event, e);
    return this.enqueue(e.tenant_id, e.event_id, event, payload.data.action_id, tenant.url, JSON.stringify(payload));
  }

  async list(tenantId: string, f: ListFilter): Promise<DeliveryView[]> {
    if (f.status && !DELIVERY_STATUSES.includes(f.status)) throw InputError.at(['query', 'status'], `status must be one of ${DELIVERY_STATUSES.join(', ')}`);
    const rows = await this.d.repo.list(tenantId, { ...f, limit: Math.min(Math.max(f.limit || 50, 1), MAX_LIST_LIMIT) });
    const attempts = await this.d.repo.attempts(
      tenantId,
      rows.map((r) => r.id),
    );
    return rows.map((r) => present(r, attempts.get(r.id) ?? []));
  }

  async get(tenantId: string, deliveryId: string): Promise<DeliveryView> {
    if (!UUID.test(deliveryId)) throw new NotFoundError('Webhook delivery not found');
    const row = await this.d.repo.get(tenantId, deliveryId);
    if (!row) throw new NotFoundError('Webhook delivery not found');
    const attempts = await this.d.repo.attempts(tenantId, [row.id]);
    return present(row, attempts.get(row.id) ?? []);
  }

  /**
   * Send a sample event to the tenant's webhook URL now, whatever its subscriptions: attempt 1 runs before
   * this returns; a failed attempt is retried on the normal schedule (2, 4, 8 s) like any delivery.
   */
  async test(tenantId: string, event: string = TEST_EVENT): Promise<DeliveryView> {
    if (!(TEST_EVENTS as readonly string[]).includes(event)) throw InputError.field('event', `event must be one of ${TEST_EVENTS.join(', ')}`);
    const tenant = await this.d.tenants.get(tenantId);
    if (!tenant.url) throw new ConflictError('No webhook_url is configured for this tenant; set one with PATCH /api/dashboard/settings first');
    const payload = testPayload(event as TestEvent);
    const id = randomUUID();
    await this.d.repo.insert(tenantId, {
      id,
      eventId: `test:${id}`,
      event,
      actionId: payload.data.action_id,
      url: tenant.url,
      body: JSON.stringify(payload),
      isTest: true,
      dueInMs: this.d.leaseMs,
    });
    const row = await this.d.repo.get(tenantId, id);
    if (!row) throw new NotFoundError('Webhook delivery not found');
    await this.d.worker.attempt(row);
    return this.get(tenantId, id);
  }

  private async enqueue(tenantId: string, eventId: string, event: string, actionId: string | null, url: string, body: string): Promise<EnqueueResult> {
    const inserted = await this.d.repo.insert(tenantId, { id: randomUUID(), eventId, event, actionId, url, body, isTest: false, dueInMs: 0 });
    if (inserted) this.d.worker.kick();
    return this.count(inserted ? 'enqueued' : 'duplicate');
  }

  private count(result: EnqueueResult): EnqueueResult {
    this.d.metrics.eventsConsumed.inc({ result });
    return result;
  }
}

function present(r: DeliveryRow, attempts: AttemptRow[]): DeliveryView {
  return {
    delivery_id: r.id,
    event: r.event,
    event_id: r.event_id,
    action_id: r.action_id,
    url: r.url,
    status: r.status,
    attempts: r.attempts,
    created_at: r.created_at.toISOString(),
    next_attempt_at: r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
    completed_at: r.completed_at ? r.completed_at.toISOString() : null,
    last_status_code: r.last_status_code,
    last_error: r.last_error,
    test: r.is_test,
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      outcome: a.outcome,
      error: a.error,
    })),
  };
}
