import { type Kysely, sql } from 'kysely';

/**
 * Federation of upstream MCP servers (docs/federation.md), owned by the vault service: a tenant's upstreams
 * (the credential sealed by the tenant's credentials key in the HSM, never in clear) and the catalog of
 * their tools with the pinned definition (SHA-256 of its RFC 8785 form) and, while a tool is quarantined,
 * the candidate definition a human may approve.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE federation_upstreams (
      tenant_id uuid NOT NULL,
      name text NOT NULL,
      url text NOT NULL,
      transport text NOT NULL,
      description text,
      credential_type text NOT NULL DEFAULT 'none',
      credential_meta jsonb NOT NULL DEFAULT '{}'::jsonb,
      key_id text,
      sealed jsonb,
      tool_filter jsonb NOT NULL DEFAULT '{}'::jsonb,
      tool_approval text NOT NULL DEFAULT 'auto',
      timeout_ms integer,
      status text NOT NULL DEFAULT 'error',
      status_reason text,
      server_info jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      refreshed_at timestamptz,
      PRIMARY KEY (tenant_id, name)
    );
    CREATE TABLE federation_tools (
      tenant_id uuid NOT NULL,
      upstream text NOT NULL,
      name text NOT NULL,
      state text NOT NULL,
      reason text,
      markers jsonb NOT NULL DEFAULT '[]'::jsonb,
      pinned jsonb,
      pinned_sha256 text,
      candidate jsonb,
      candidate_sha256 text,
      first_seen_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      approved_at timestamptz,
      approved_by text,
      PRIMARY KEY (tenant_id, upstream, name),
      FOREIGN KEY (tenant_id, upstream) REFERENCES federation_upstreams (tenant_id, name) ON DELETE CASCADE
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE federation_tools, federation_upstreams`.execute(db);
}
