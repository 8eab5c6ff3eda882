import { type Kysely, sql } from 'kysely';

/**
 * Upstreams that need OAuth (docs/federation.md, "Upstreams that need OAuth"), owned by the vault:
 *
 * - `federation_upstreams.connection`: `shared` (one connection for the tenant) or `per_user` (each human
 *   connects their own account);
 * - `federation_oauth_grants`: a connection's tokens (access and refresh, one JSON text) sealed by the
 *   tenant's credentials key in the HSM, one row per (upstream, user) (`user_id` '' for the shared one);
 *   never in clear;
 * - `federation_oauth_pending`: an authorization a human started and has not finished, keyed by the
 *   SHA-256 of its `state` (single use: the callback deletes the row it reads), bound to the human and to
 *   the browser that started it (`binding_sha256`, the hash of an HttpOnly cookie); its PKCE verifier is
 *   sealed too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE federation_upstreams ADD COLUMN connection text NOT NULL DEFAULT 'shared';
    CREATE TABLE federation_oauth_grants (
      tenant_id uuid NOT NULL,
      upstream text NOT NULL,
      user_id text NOT NULL DEFAULT '',
      key_id text NOT NULL,
      sealed jsonb NOT NULL,
      scope text,
      expires_at timestamptz,
      connected_by text,
      connected_at timestamptz NOT NULL DEFAULT now(),
      refreshed_at timestamptz,
      PRIMARY KEY (tenant_id, upstream, user_id),
      FOREIGN KEY (tenant_id, upstream) REFERENCES federation_upstreams (tenant_id, name) ON DELETE CASCADE
    );
    CREATE TABLE federation_oauth_pending (
      state_sha256 text PRIMARY KEY,
      tenant_id uuid NOT NULL,
      upstream text NOT NULL,
      user_id text NOT NULL DEFAULT '',
      requested_by text NOT NULL,
      binding_sha256 text NOT NULL,
      redirect_uri text NOT NULL,
      key_id text NOT NULL,
      sealed jsonb NOT NULL,
      expires_at timestamptz NOT NULL,
      FOREIGN KEY (tenant_id, upstream) REFERENCES federation_upstreams (tenant_id, name) ON DELETE CASCADE
    );
    CREATE INDEX federation_oauth_pending_expiry ON federation_oauth_pending (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE federation_oauth_pending, federation_oauth_grants; ALTER TABLE federation_upstreams DROP COLUMN connection`.execute(db);
}
