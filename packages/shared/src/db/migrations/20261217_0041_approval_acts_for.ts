import { type Kysely, sql } from 'kysely';

/**
 * Upstreams that need OAuth (docs/federation.md, "Per-user connections"; issue 45): a queued action
 * keeps the human its call acted for (`acts_for_user_id`: a signed-in human, an OAuth MCP client's
 * consenting human, an API key's issuing member, a managed session's starter), so an approval executed
 * later uses that human's connection of a per_user upstream, never the approver's. No foreign key: the
 * row outlives a removed member (whose connections are gone, so the call is refused).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE approvals ADD COLUMN acts_for_user_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE approvals DROP COLUMN acts_for_user_id`.execute(db);
}
