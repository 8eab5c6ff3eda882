import { type Kysely, sql } from 'kysely';

/**
 * The anchor references the signed checkpoint it anchors (docs/evidence.md, "The anchor as a witness"):
 * each anchored tenant tree head keeps the SHA-256 of its signed checkpoint note, which its aggregate leaf
 * (written on chain through the aggregate root) then covers. Null: anchored before this, or while the
 * head had no signed checkpoint (leaf without it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE anchor_tree_heads ADD COLUMN checkpoint_sha256 text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE anchor_tree_heads DROP COLUMN checkpoint_sha256`.execute(db);
}
