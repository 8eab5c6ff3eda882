import { type Kysely, sql } from 'kysely';

/**
 * Deliveries remember the AGW_STREAM_PREFIX of the fleet that accepted their event; a webhook service only
 * claims its own fleet's deliveries, so fleets sharing a database (test runs, a dev fleet beside the e2e
 * fleet) never attempt each other's deliveries. Production runs one prefix ('').
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries ADD COLUMN stream_prefix text NOT NULL DEFAULT '';
    DROP INDEX webhook_deliveries_due_idx;
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (stream_prefix, next_attempt_at) WHERE status = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX webhook_deliveries_due_idx;
    ALTER TABLE webhook_deliveries DROP COLUMN stream_prefix;
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
  `.execute(db);
}
