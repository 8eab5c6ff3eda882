import { type Kysely, sql } from 'kysely';

/**
 * Members and roles (docs/auth.md, "Members, invitations and roles"; issue 44): every user row of a tenant
 * holds one role. Users that exist already are the owners of their tenants (until now every user could do
 * everything). Invitations keep only the SHA-256 of their single-use token; one is used once
 * (`accepted_at`), ends at `expires_at`, or is withdrawn (the row is deleted).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users ADD COLUMN role text NOT NULL DEFAULT 'owner'
      CHECK (role IN ('owner', 'admin', 'policy_author', 'approver', 'auditor', 'viewer'));
    CREATE TABLE member_invitations (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'policy_author', 'approver', 'auditor', 'viewer')),
      token_hash text NOT NULL UNIQUE,
      invited_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz
    );
    CREATE INDEX member_invitations_tenant ON member_invitations (tenant_id);
    CREATE INDEX console_refresh_tokens_user ON console_refresh_tokens (user_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX console_refresh_tokens_user;
    DROP TABLE member_invitations;
    ALTER TABLE users DROP COLUMN role;
  `.execute(db);
}
