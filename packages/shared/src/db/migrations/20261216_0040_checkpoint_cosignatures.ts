import { type Kysely, sql } from 'kysely';

/**
 * Witness cosignatures of signed checkpoints (docs/evidence.md, "Witnesses"): one C2SP tlog-cosignature line
 * per (tenant, checkpoint size, witness), as the witness answered add-checkpoint. The cosigned checkpoint is
 * the checkpoint's note followed by its lines. A witness's last cosigned size for a tenant is the largest
 * size it has a line for.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE checkpoint_cosignatures (
      tenant_id uuid NOT NULL,
      tree_size bigint NOT NULL,
      witness text NOT NULL,
      line text NOT NULL,
      cosigned_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, witness, tree_size)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE checkpoint_cosignatures`.execute(db);
}
