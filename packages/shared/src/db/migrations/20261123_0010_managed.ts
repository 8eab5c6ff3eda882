import { type Kysely, sql } from 'kysely';

/**
 * Managed agents: configs (a delegation tree per tenant) and governed sessions on the external agent
 * platform, with the lease that lets exactly one managed replica consume a session's event stream.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE managed_agent_configs (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      anthropic_model text NOT NULL,
      system_prompt text,
      allowed_tools jsonb NOT NULL DEFAULT '[]',
      require_human_approval jsonb NOT NULL DEFAULT '[]',
      max_session_hours double precision NOT NULL DEFAULT 8,
      max_daily_sessions integer,
      max_delegation_depth integer NOT NULL DEFAULT 1,
      governance_profile jsonb NOT NULL DEFAULT '{}',
      parent_agent_id uuid REFERENCES managed_agent_configs(id),
      depth integer NOT NULL DEFAULT 0,
      platform_agent_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX managed_agent_configs_tenant ON managed_agent_configs (tenant_id, created_at);

    CREATE TABLE managed_sessions (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES managed_agent_configs(id),
      anthropic_session_id text,
      status text NOT NULL,
      system_prompt_hash text NOT NULL,
      mcp_server_url text NOT NULL,
      platform_vault_id text,
      environment_id text,
      bundle_revision text,
      metadata jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      ended_at timestamptz,
      end_reason text,
      interrupt_reason text,
      interrupted_at timestamptz,
      auto_triggered boolean NOT NULL DEFAULT false,
      interrupt_action_id uuid,
      consumer_status text NOT NULL DEFAULT 'pending',
      consumer_owner text,
      consumer_lease_until timestamptz,
      connected_since timestamptz,
      events_processed integer NOT NULL DEFAULT 0,
      last_event_id text,
      last_activity_at timestamptz,
      max_anomaly_score double precision NOT NULL DEFAULT 0
    );
    CREATE INDEX managed_sessions_tenant ON managed_sessions (tenant_id, created_at);
    CREATE INDEX managed_sessions_active ON managed_sessions (status, consumer_lease_until) WHERE status = 'active';

    CREATE TABLE managed_platform_resources (
      key text PRIMARY KEY,
      platform_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE managed_platform_resources;
    DROP TABLE managed_sessions;
    DROP TABLE managed_agent_configs;
  `.execute(db);
}
