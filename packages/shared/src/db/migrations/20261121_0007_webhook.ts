import { type Kysely, sql } from 'kysely';

/**
 * Webhook deliveries (owned by the webhook service). One row per (tenant, source event): the unique key
 * makes a redelivered NATS message a no-op. `next_attempt_at` is both the retry schedule and the lease of a
 * worker that claimed the row (FOR UPDATE SKIP LOCKED), so retries survive restarts and replicas never
 * work on the same row at once. Every attempt is logged in webhook_attempts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      event_id text NOT NULL,
      event text NOT NULL,
      action_id text,
      url text NOT NULL,
      body text NOT NULL,
      is_test boolean NOT NULL DEFAULT false,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      UNIQUE (tenant_id, event_id)
    );
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_tenant_idx ON webhook_deliveries (tenant_id, created_at DESC);
    CREATE INDEX webhook_deliveries_action_idx ON webhook_deliveries (tenant_id, action_id);
    CREATE TABLE webhook_attempts (
      delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL,
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      status_code integer,
      outcome text NOT NULL,
      error text,
      PRIMARY KEY (delivery_id, attempt)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE webhook_attempts, webhook_deliveries`.execute(db);
}
