import { type Kysely, sql } from 'kysely';

/**
 * Grants a tenant controls (docs/auth.md, "MCP clients: OAuth 2.1"; issue 42, item 5):
 * - `oauth_grants.expires_at`: a grant's absolute lifetime (OAUTH_GRANT_MAX_AGE_DAYS after its consent;
 *   grants made before this migration get 90 days from their creation); no token outlives it.
 * - `oauth_grants.last_used_at`: when an access token of the grant was last used (written at most once a
 *   minute), shown by GET /api/oauth/grants.
 * - `redirect_uri_sent` on requests and codes: the authorization request carried a redirect_uri, so the
 *   token request must carry the same (RFC 6749 §4.1.3).
 * - indexes for the tenant's list and for the purge of expired rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE oauth_grants ADD COLUMN expires_at timestamptz, ADD COLUMN last_used_at timestamptz;
    UPDATE oauth_grants SET expires_at = created_at + interval '90 days';
    ALTER TABLE oauth_grants ALTER COLUMN expires_at SET NOT NULL;
    CREATE INDEX oauth_grants_tenant_created ON oauth_grants (tenant_id, created_at DESC);
    CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
    ALTER TABLE oauth_authorization_requests ADD COLUMN redirect_uri_sent boolean NOT NULL DEFAULT false;
    ALTER TABLE oauth_codes ADD COLUMN redirect_uri_sent boolean NOT NULL DEFAULT false;
    CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);
    CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);
    CREATE INDEX oauth_authorization_requests_expires ON oauth_authorization_requests (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX oauth_authorization_requests_expires;
    DROP INDEX oauth_codes_expires;
    DROP INDEX oauth_tokens_expires;
    ALTER TABLE oauth_codes DROP COLUMN redirect_uri_sent;
    ALTER TABLE oauth_authorization_requests DROP COLUMN redirect_uri_sent;
    DROP INDEX oauth_grants_client;
    DROP INDEX oauth_grants_tenant_created;
    ALTER TABLE oauth_grants DROP COLUMN last_used_at, DROP COLUMN expires_at;
  `.execute(db);
}
