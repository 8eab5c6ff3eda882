import { type Kysely, sql } from 'kysely';

/**
 * One owner per outbox row (issue 24): `owner` names the service whose relay publishes the row, set when the
 * row is written. `audit_append_batch` (the audit service's commit) writes no owner: the default, 'audit'.
 * The gateway and the managed service write theirs through `EventOutboxRepository` ('gateway', 'managed').
 * No relay takes another owner's rows, so none waits a timeout to do so (AUDIT_OWNED_OUTBOX_MS is gone).
 *
 * Rows already waiting when this runs: session events only the managed service publishes (its rows);
 * every other row stays the audit service's, whose sweep publishes any decision row, whoever wrote it (a
 * second publish of an event JetStream already has is dropped as a duplicate: same event id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE event_outbox ADD COLUMN owner text NOT NULL DEFAULT 'audit'`.execute(db);
  await sql`UPDATE event_outbox SET owner = 'managed' WHERE subject ~ '(^|\\.)sessions\\.'`.execute(db);
  await sql`CREATE INDEX event_outbox_owner_id ON event_outbox (owner, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX event_outbox_owner_id`.execute(db);
  await sql`ALTER TABLE event_outbox DROP COLUMN owner`.execute(db);
}
