import { type Kysely, sql } from 'kysely';

/**
 * Shadow rollout of a candidate policy (docs/policy.md, "Shadow rollout"): one shadow per tenant runs at a
 * time (`status` running); it ends by itself after `max_calls` governed calls or at `expires_at`, or when a
 * human promotes or discards it. Each governed call decided while it runs is also decided by the candidate,
 * off the answer's path, and kept in `policy_shadow_decisions` by its action id (the audit record's
 * action_id). `calls` is claimed per decision row, so the count is exact across replicas.
 *
 * OPA bundles (docs/policy.md, "OPA bundles"): a tenant's bundle source (an HTTPS URL and the public key its
 * `.signatures.json` must verify with), polled with its ETag; a policy (or a shadow's candidate) activated
 * from a bundle keeps the bundle's `.manifest` revision and digest (`source_revision`, `source_digest`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE policy_shadows (
      shadow_id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'ended', 'promoted', 'discarded')),
      policy_template text NOT NULL,
      policy_overrides jsonb NOT NULL DEFAULT '{}',
      custom_policy text,
      revision text NOT NULL,
      bundle_hash text NOT NULL,
      max_calls integer NOT NULL CHECK (max_calls > 0),
      calls integer NOT NULL DEFAULT 0,
      dropped integer NOT NULL DEFAULT 0,
      started_by text NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      ended_at timestamptz,
      end_reason text
    );
    CREATE UNIQUE INDEX policy_shadows_running ON policy_shadows (tenant_id) WHERE status = 'running';
    CREATE INDEX policy_shadows_tenant ON policy_shadows (tenant_id, started_at DESC);
    CREATE TABLE policy_shadow_decisions (
      shadow_id uuid NOT NULL REFERENCES policy_shadows (shadow_id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL,
      action_id uuid NOT NULL,
      agent_id text NOT NULL,
      tool text NOT NULL,
      live_decision text NOT NULL,
      live_violations jsonb NOT NULL,
      live_revision text NOT NULL,
      live_eval_ms double precision NOT NULL,
      candidate_decision text NOT NULL,
      candidate_violations jsonb NOT NULL,
      candidate_eval_ms double precision NOT NULL,
      differs boolean NOT NULL,
      decided_at timestamptz NOT NULL,
      PRIMARY KEY (shadow_id, action_id)
    );
    CREATE INDEX policy_shadow_decisions_differing ON policy_shadow_decisions (shadow_id, decided_at DESC) WHERE differs;
    ALTER TABLE policy_shadows ADD COLUMN source_revision text, ADD COLUMN source_digest text;
    ALTER TABLE policy_tenant_policies ADD COLUMN source_revision text, ADD COLUMN source_digest text;
    CREATE TABLE policy_bundle_sources (
      tenant_id uuid PRIMARY KEY,
      url text NOT NULL,
      public_key text NOT NULL,
      scope text,
      activation text NOT NULL CHECK (activation IN ('direct', 'shadow')),
      shadow_max_calls integer,
      shadow_seconds integer,
      etag text,
      last_polled_at timestamptz,
      last_outcome text,
      last_detail text,
      revision text,
      digest text,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE policy_bundle_sources;
    ALTER TABLE policy_tenant_policies DROP COLUMN source_revision, DROP COLUMN source_digest;
    DROP TABLE policy_shadow_decisions;
    DROP TABLE policy_shadows;
  `.execute(db);
}
