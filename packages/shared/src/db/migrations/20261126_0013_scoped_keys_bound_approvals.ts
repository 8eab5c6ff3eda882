import { type Kysely, sql } from 'kysely';

/**
 * Approvals an agent cannot grant itself (docs/auth.md):
 * - API keys get a scope: `tenant` (every existing key: the spec's behaviour) or `agent` (tool calls, the
 *   MCP server and the status of its own actions only), a name and who created it;
 * - a queued action can expire (`expired` state, `expires_at`); existing pending actions get 24 hours from
 *   now rather than expiring at the first sweep;
 * - a queued action keeps what binds a decision to the exact call: the params' hash, the bundle revision it
 *   was evaluated under, the key that asked; an approved agent_direct action records its one retry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      ADD COLUMN scope text NOT NULL DEFAULT 'tenant' CHECK (scope IN ('tenant', 'agent')),
      ADD COLUMN name text,
      ADD COLUMN created_by text;
    ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_status_check;
    ALTER TABLE approvals ADD CONSTRAINT approvals_status_check CHECK (status IN ('pending', 'approved', 'rejected', 'expired'));
    ALTER TABLE approvals
      ADD COLUMN params_sha256 text,
      ADD COLUMN bundle_revision text,
      ADD COLUMN requested_by_key text,
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN decision_binding jsonb,
      ADD COLUMN retried_at timestamptz;
    UPDATE approvals SET expires_at = greatest(queued_at, now()) + interval '24 hours' WHERE status = 'pending';
    CREATE INDEX approvals_expiry_idx ON approvals (expires_at) WHERE status = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX IF EXISTS approvals_expiry_idx;
    ALTER TABLE approvals DROP COLUMN params_sha256, DROP COLUMN bundle_revision, DROP COLUMN requested_by_key,
      DROP COLUMN expires_at, DROP COLUMN decision_binding, DROP COLUMN retried_at;
    DELETE FROM approvals WHERE status = 'expired';
    ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_status_check;
    ALTER TABLE approvals ADD CONSTRAINT approvals_status_check CHECK (status IN ('pending', 'approved', 'rejected'));
    ALTER TABLE api_keys DROP COLUMN scope, DROP COLUMN name, DROP COLUMN created_by;
  `.execute(db);
}
