import { type Kysely, sql } from 'kysely';

/**
 * Databases migrated with an early form of 0018 had foreign keys from oauth_authorization_requests and
 * oauth_grants to oauth_clients. Neither belongs: a client identified by a client ID metadata document is
 * fetched, not stored, and a tenant's backup holds its grants without the fleet-wide client registry.
 * Dropped where they exist (0018 no longer creates them).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE oauth_authorization_requests DROP CONSTRAINT IF EXISTS oauth_authorization_requests_client_id_fkey;
    ALTER TABLE oauth_grants DROP CONSTRAINT IF EXISTS oauth_grants_client_id_fkey;
  `.execute(db);
}
