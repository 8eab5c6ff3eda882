import { type Kysely, sql } from 'kysely';

/**
 * Policy service tables: each tenant's effective policy, every bundle revision it ever had, and the
 * decisions it took with what replay needs (params as stored: PII already replaced by ciphertext
 * envelopes; the behavioral data of the decision; the decision time for time-dependent rules).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE policy_tenant_policies (
      tenant_id uuid PRIMARY KEY,
      policy_template text NOT NULL,
      policy_overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
      custom_policy text,
      revision text NOT NULL,
      bundle_hash text NOT NULL,
      activated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE policy_bundle_revisions (
      tenant_id uuid NOT NULL,
      revision text NOT NULL,
      bundle_hash text NOT NULL,
      policy_template text NOT NULL,
      policy_config jsonb NOT NULL,
      custom_policy text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, revision)
    );
    CREATE TABLE policy_decisions (
      tenant_id uuid NOT NULL,
      action_id uuid NOT NULL,
      agent_id text NOT NULL,
      agent_type text NOT NULL,
      agent_version text NOT NULL,
      tool text NOT NULL,
      method text NOT NULL,
      session_id text,
      stored_params jsonb NOT NULL,
      pii_detected boolean NOT NULL,
      behavioral jsonb,
      decision text NOT NULL,
      violations jsonb NOT NULL,
      severity text NOT NULL,
      bundle_revision text NOT NULL,
      passes integer NOT NULL,
      evaluated_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, action_id)
    );
    CREATE INDEX policy_decisions_agent_idx ON policy_decisions (tenant_id, agent_id, evaluated_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE policy_decisions, policy_bundle_revisions, policy_tenant_policies`.execute(db);
}
