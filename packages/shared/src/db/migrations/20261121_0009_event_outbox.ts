import { type Kysely, sql } from 'kysely';

/** Decision events whose publish failed wait here until a gateway replica's relay publishes them. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE event_outbox (
      id bigserial PRIMARY KEY,
      subject text NOT NULL,
      event jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      attempts integer NOT NULL DEFAULT 0,
      last_error text
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE event_outbox`.execute(db);
}
