import { type Kysely, sql } from 'kysely';

/**
 * Vault tables: HSM key registry (labels and lifecycle, never key material), credentials (ciphertext
 * only), the credential access log, and the subject -> action index used by crypto-shredding.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE vault_keys (
      tenant_id uuid NOT NULL,
      key_id text NOT NULL,
      purpose text NOT NULL,
      subject_id text,
      backend text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      destroyed_at timestamptz,
      PRIMARY KEY (tenant_id, key_id)
    );
    CREATE UNIQUE INDEX vault_keys_subject_idx ON vault_keys (tenant_id, subject_id) WHERE purpose = 'pii_subject';
    CREATE TABLE vault_subjects (
      tenant_id uuid NOT NULL,
      subject_id text NOT NULL,
      key_id text NOT NULL,
      source text NOT NULL,
      pii_kinds jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      erased_at timestamptz,
      PRIMARY KEY (tenant_id, subject_id)
    );
    CREATE TABLE vault_subject_actions (
      tenant_id uuid NOT NULL,
      subject_id text NOT NULL,
      action_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, subject_id, action_id)
    );
    CREATE TABLE vault_credentials (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      tool_id text NOT NULL,
      name text NOT NULL,
      credential_type text NOT NULL,
      upstream_url text,
      upstream_method text NOT NULL DEFAULT 'POST',
      header_name text,
      key_id text NOT NULL,
      sealed jsonb NOT NULL,
      registered_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, tool_id, name)
    );
    CREATE TABLE vault_credential_access (
      id bigserial PRIMARY KEY,
      tenant_id uuid NOT NULL,
      at timestamptz NOT NULL DEFAULT now(),
      agent_id text NOT NULL,
      tool_id text NOT NULL,
      credential_name text NOT NULL,
      action_id uuid,
      origin text NOT NULL,
      outcome text NOT NULL,
      status_code integer,
      hsm_fetch_ms double precision,
      execution_ms double precision,
      error text
    );
    CREATE INDEX vault_credential_access_tenant_idx ON vault_credential_access (tenant_id, id DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE vault_credential_access, vault_credentials, vault_subject_actions, vault_subjects, vault_keys`.execute(db);
}
