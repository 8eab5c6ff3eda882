import { type Kysely, sql } from 'kysely';

/**
 * Merkle tree heads (RFC 9162, cumulative per tenant like a CT signed tree head) and the perfect-subtree
 * hashes they are built from, so inclusion and consistency proofs are O(log n) reads.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE merkle_nodes (
      tenant_id uuid NOT NULL,
      level smallint NOT NULL,
      idx bigint NOT NULL,
      hash bytea NOT NULL,
      PRIMARY KEY (tenant_id, level, idx)
    );
    CREATE TABLE merkle_tree_heads (
      tenant_id uuid NOT NULL,
      tree_index integer NOT NULL,
      tree_size bigint NOT NULL,
      merkle_root text NOT NULL,
      records_added integer NOT NULL,
      from_record_id bigint,
      to_record_id bigint,
      period_start timestamptz NOT NULL,
      period_end timestamptz NOT NULL,
      built_by text NOT NULL DEFAULT 'schedule',
      built_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, tree_index),
      UNIQUE (tenant_id, tree_size)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE merkle_tree_heads, merkle_nodes`.execute(db);
}
