import { type Kysely, sql } from 'kysely';

/**
 * Signed checkpoints (C2SP tlog-checkpoint in a C2SP signed note) of each tenant's tree heads, signed by
 * the vault's HSM-held Ed25519 key after a fork check against the previous checkpoint (docs/evidence.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE merkle_checkpoints (
      tenant_id uuid NOT NULL,
      tree_size bigint NOT NULL,
      tree_index integer NOT NULL,
      merkle_root text NOT NULL,
      origin text NOT NULL,
      key_name text NOT NULL,
      note text NOT NULL,
      checkpoint_sha256 text NOT NULL,
      signed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, tree_size)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE merkle_checkpoints`.execute(db);
}
