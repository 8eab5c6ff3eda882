/** Tables owned by the webhook service (migrations 20261121_0007_webhook, 20261121_0007b_webhook_stream_prefix). */
import type { ColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to deliver to one tenant's webhook URL, with its retry state. */
export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  /** the source event's id (decision event_id, or `test:<uuid>`); unique per tenant */
  event_id: string;
  /** webhook event name, e.g. action.allowed */
  event: string;
  action_id: string | null;
  /** the target as configured when the event was accepted */
  url: string;
  /** the exact JSON body sent (and signed) on every attempt */
  body: string;
  is_test: ColumnType<boolean, boolean | undefined, boolean>;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  /** when the next attempt is due (also the lease of the worker that claimed it); null once final */
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Timestamp;
  completed_at: Date | null;
  /** AGW_STREAM_PREFIX of the fleet that accepted the event; a fleet only attempts its own (migration 0007b) */
  stream_prefix: ColumnType<string, string | undefined, string>;
}

/** One HTTP attempt of a delivery. */
export interface WebhookAttemptsTable {
  delivery_id: string;
  tenant_id: string;
  attempt: number;
  started_at: Timestamp;
  duration_ms: number;
  status_code: number | null;
  /** success | http_error | timeout | network_error | tls_error | refused | error */
  outcome: string;
  error: string | null;
}

export interface WebhookTables {
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
