import { type Kysely, sql } from 'kysely';

/**
 * Console sessions that survive a reload (docs/console.md, "The session token"): refresh tokens held by the
 * browser in an HttpOnly cookie, stored here as SHA-256 only. Each use rotates the token (the used one is
 * marked); a used token presented again revokes its whole family (someone else holds a copy).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE console_refresh_tokens (
      token_hash text PRIMARY KEY,
      family_id uuid NOT NULL,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      user_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX console_refresh_tokens_family ON console_refresh_tokens (family_id);
    CREATE INDEX console_refresh_tokens_tenant ON console_refresh_tokens (tenant_id);
  `.execute(db);
}
