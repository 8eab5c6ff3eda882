import { type Kysely, sql } from 'kysely';

/**
 * Anchoring: the contract deployed per chain, the tenant tree heads received from the audit service
 * (pending until a batch anchors them), and the batches (one transaction each, aggregate root on chain).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE anchor_contracts (
      chain_id integer PRIMARY KEY,
      address text NOT NULL,
      deploy_tx_hash text,
      deployed_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE anchor_batches (
      id bigserial PRIMARY KEY,
      chain_id integer NOT NULL,
      network text NOT NULL,
      contract_address text NOT NULL,
      aggregate_root text NOT NULL,
      leaf_count integer NOT NULL,
      tx_hash text,
      block_number bigint,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'anchored', 'failed')),
      created_at timestamptz NOT NULL DEFAULT now(),
      anchored_at timestamptz
    );
    CREATE TABLE anchor_tree_heads (
      tenant_id uuid NOT NULL,
      tree_index integer NOT NULL,
      tree_size bigint NOT NULL,
      merkle_root text NOT NULL,
      period_start timestamptz NOT NULL,
      period_end timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      batch_id bigint REFERENCES anchor_batches(id),
      leaf_index integer,
      aggregate_proof jsonb,
      PRIMARY KEY (tenant_id, tree_index)
    );
    CREATE INDEX anchor_tree_heads_pending_idx ON anchor_tree_heads (received_at) WHERE batch_id IS NULL;
    CREATE INDEX anchor_tree_heads_batch_idx ON anchor_tree_heads (batch_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE anchor_tree_heads, anchor_batches, anchor_contracts`.execute(db);
}
