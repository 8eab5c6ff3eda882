import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE tenants (
      id uuid PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      email text NOT NULL UNIQUE,
      password_hash text,
      email_verified boolean NOT NULL DEFAULT false,
      github_id text UNIQUE,
      is_admin boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX users_tenant_idx ON users (tenant_id);
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      key_hash text NOT NULL UNIQUE,
      key_prefix text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id);
    CREATE TABLE tenant_settings (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE approvals (
      action_id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      agent_id text NOT NULL,
      agent_type text NOT NULL,
      agent_version text NOT NULL,
      tool text NOT NULL,
      method text NOT NULL,
      params jsonb NOT NULL,
      opa_result jsonb NOT NULL,
      queue_reason text NOT NULL DEFAULT 'policy',
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
      queued_at timestamptz NOT NULL DEFAULT now(),
      decided_at timestamptz,
      decided_by text,
      note text,
      execution jsonb,
      session_id text
    );
    CREATE INDEX approvals_tenant_status_idx ON approvals (tenant_id, status, queued_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE approvals, tenant_settings, api_keys, users, tenants`.execute(db);
}
