/** Tables owned by the anchor service (migration 20261121_0005_anchor). */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { OptionalNull } from './columns';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** The anchor contract deployed on a chain (reused after a restart while the chain still has its code). */
export interface AnchorContractsTable {
  chain_id: number;
  address: string;
  deploy_tx_hash: string | null;
  deployed_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** One on-chain transaction: the aggregate root of the tenant tree heads it covers. */
export interface AnchorBatchesTable {
  id: Generated<number>;
  chain_id: number;
  network: string;
  contract_address: string;
  aggregate_root: string;
  leaf_count: number;
  tx_hash: string | null;
  block_number: number | null;
  status: ColumnType<'pending' | 'anchored' | 'failed', 'pending' | 'anchored' | 'failed' | undefined, 'pending' | 'anchored' | 'failed'>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  anchored_at: Date | null;
}

/** A tenant tree head received from the audit service; batch_id/leaf_index/aggregate_proof once anchored. */
export interface AnchorTreeHeadsTable {
  tenant_id: string;
  tree_index: number;
  tree_size: number;
  merkle_root: string;
  period_start: Timestamp;
  period_end: Timestamp;
  received_at: ColumnType<Date, Date | string | undefined, Date | string>;
  batch_id: number | null;
  leaf_index: number | null;
  /** RFC 9162 inclusion proof (hex) of this tenant leaf in the batch's aggregate tree */
  aggregate_proof: JSONColumnType<string[]> | null;
  /** SHA-256 (hex) of the head's signed checkpoint note that its aggregate leaf covers; null: a leaf without it */
  checkpoint_sha256: OptionalNull<string>;
}

export interface AnchorTables {
  anchor_contracts: AnchorContractsTable;
  anchor_batches: AnchorBatchesTable;
  anchor_tree_heads: AnchorTreeHeadsTable;
}
