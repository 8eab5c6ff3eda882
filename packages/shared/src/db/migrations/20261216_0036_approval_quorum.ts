import { type Kysely, sql } from 'kysely';

/**
 * Four-eyes approvals (docs/auth.md, "Four-eyes approvals"; issue 44): a queued action records how many
 * distinct members must approve it (`required_approvers`, the stricter of the tenant setting and the
 * policy's output) and the member whose console session started it (`initiator_user_id`; a key's or an
 * OAuth grant's owner is found from `requested_by_key`). Each member's approval is one row of
 * `approval_votes`, unique per (action, member): two replicas recording the same member's vote at once
 * store it once. A vote keeps the member's id after the member is removed (no foreign key to users).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE approvals
      ADD COLUMN required_approvers integer NOT NULL DEFAULT 1 CHECK (required_approvers BETWEEN 1 AND 10),
      ADD COLUMN initiator_user_id uuid;
    CREATE TABLE approval_votes (
      action_id uuid NOT NULL REFERENCES approvals (action_id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL,
      member_id uuid NOT NULL,
      member_email text NOT NULL,
      note text,
      voted_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (action_id, member_id)
    );
    CREATE INDEX approval_votes_tenant ON approval_votes (tenant_id, action_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE approval_votes;
    ALTER TABLE approvals DROP COLUMN required_approvers, DROP COLUMN initiator_user_id;
  `.execute(db);
}
