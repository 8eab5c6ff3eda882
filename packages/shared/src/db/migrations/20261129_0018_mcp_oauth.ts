import { type Kysely, sql } from 'kysely';

/**
 * OAuth 2.1 for the MCP endpoints (docs/auth.md, "MCP clients: OAuth"), owned by the gateway: clients
 * registered dynamically (RFC 7591; public clients, PKCE; clients identified by a client ID metadata
 * document are fetched, not stored), authorization requests waiting for a human's
 * consent, authorization codes, grants (a tenant's consent to one client for one agent identity) and the
 * tokens issued under them. Codes and tokens are stored as SHA-256 hashes only, like API keys.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE oauth_clients (
      client_id text PRIMARY KEY,
      metadata jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE oauth_authorization_requests (
      id text PRIMARY KEY,
      -- a registered client's id, or the HTTPS URL of a client ID metadata document (not in oauth_clients)
      client_id text NOT NULL,
      redirect_uri text NOT NULL,
      state text,
      scopes text[] NOT NULL,
      code_challenge text NOT NULL,
      resource text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      decided_at timestamptz
    );
    CREATE TABLE oauth_grants (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      -- no foreign key to oauth_clients: a tenant's backup holds its grants (they have its tenant_id) and
      -- must restore without the fleet-wide client registry; tokens are not in backups (clients sign in again)
      client_id text NOT NULL,
      agent_name text NOT NULL,
      scopes text[] NOT NULL,
      resource text NOT NULL,
      granted_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );
    CREATE INDEX oauth_grants_tenant ON oauth_grants (tenant_id);
    CREATE TABLE oauth_codes (
      code_hash text PRIMARY KEY,
      grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
      client_id text NOT NULL,
      redirect_uri text NOT NULL,
      code_challenge text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    );
    CREATE TABLE oauth_tokens (
      token_hash text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
      grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );
    CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
  `.execute(db);
}
