/** Merkle tree tables owned by the audit service (migration 20261121_0004_merkle). */
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** A perfect subtree hash: leaves [idx * 2^level, (idx + 1) * 2^level) of the tenant's log. Level 0 = leaf hashes. */
export interface MerkleNodesTable {
  tenant_id: string;
  level: number;
  idx: number;
  hash: Buffer;
}

/** A tree head: cumulative over the tenant's log (tree_size leaves); from/to_record_id is what it added. */
export interface MerkleTreeHeadsTable {
  tenant_id: string;
  tree_index: number;
  tree_size: number;
  merkle_root: string;
  records_added: number;
  from_record_id: number | null;
  to_record_id: number | null;
  period_start: Timestamp;
  period_end: Timestamp;
  /** 'schedule' (hourly) or 'trigger' (POST /api/anchor/trigger) */
  built_by: Generated<string>;
  built_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A signed checkpoint of a tree head (migration 20261125_0012_signed_checkpoints): the whole signed note. */
export interface MerkleCheckpointsTable {
  tenant_id: string;
  tree_size: number;
  tree_index: number;
  merkle_root: string;
  origin: string;
  key_name: string;
  note: string;
  checkpoint_sha256: string;
  signed_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A witness's cosignature line of a signed checkpoint (migration 20261216_0040_checkpoint_cosignatures). */
export interface CheckpointCosignaturesTable {
  tenant_id: string;
  tree_size: number;
  witness: string;
  line: string;
  cosigned_at: ColumnType<Date, Date | string, Date | string>;
}

export interface MerkleTables {
  checkpoint_cosignatures: CheckpointCosignaturesTable;
  merkle_nodes: MerkleNodesTable;
  merkle_tree_heads: MerkleTreeHeadsTable;
  merkle_checkpoints: MerkleCheckpointsTable;
}
