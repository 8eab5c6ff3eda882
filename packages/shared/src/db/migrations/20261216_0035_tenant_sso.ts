import { type Kysely, sql } from 'kysely';

/**
 * Single sign-on per tenant (docs/auth.md, "Single sign-on (OIDC)"; issue 44): one OpenID Connect
 * provider per tenant. The client secret is kept sealed by the vault (purpose `sso_client_secret`), never
 * in clear. An e-mail domain is bound to at most one tenant (`tenant_sso_domains` primary key).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE tenant_sso (
      tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
      issuer text NOT NULL,
      client_id text NOT NULL,
      client_secret_sealed text NOT NULL,
      default_role text NOT NULL CHECK (default_role IN ('admin', 'policy_author', 'approver', 'auditor', 'viewer')),
      groups_claim text,
      group_roles jsonb NOT NULL DEFAULT '{}'::jsonb,
      require_sso boolean NOT NULL DEFAULT false,
      updated_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE tenant_sso_domains (
      domain text PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenant_sso (tenant_id) ON DELETE CASCADE
    );
    CREATE INDEX tenant_sso_domains_tenant ON tenant_sso_domains (tenant_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE tenant_sso_domains;
    DROP TABLE tenant_sso;
  `.execute(db);
}
