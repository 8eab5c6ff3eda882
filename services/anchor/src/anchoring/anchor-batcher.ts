/**
 * One anchoring run: every pending tenant tree head goes into one aggregate RFC 9162 tree, its root is
 * written on chain in one transaction, and each head keeps its leaf index and proof. The run holds a
 * transaction-scoped Postgres advisory lock, so with several replicas exactly one writes; the schedule
 * skips when another replica holds it, a trigger waits. If the chain write fails the database
 * transaction rolls back and the heads stay pending for the next run (the contract tolerates a root
 * anchored twice).
 */
import { type Db, DependencyUnavailableError, type Logger } from '@agw/shared';
import { sql } from 'kysely';
import type { AnchorContract } from '../chain/anchor-contract';
import { buildAggregate } from './aggregate-tree';
import type { AnchorMetrics } from './anchor.metrics';
import type { AnchorRepository } from './anchor.repository';

/** pg advisory lock key of the anchoring run ("anch"). */
export const ANCHOR_LOCK = 0x616e6368;

export interface BatchResult {
  batch_id: number;
  aggregate_root: string;
  leaf_count: number;
  tx_hash: string;
  block_number: number;
}

export class AnchorBatcher {
  constructor(
    private readonly db: Db,
    private readonly repo: AnchorRepository,
    private readonly contract: () => AnchorContract,
    private readonly logger: Logger,
    private readonly maxLeaves: number,
    private readonly metrics?: AnchorMetrics,
  ) {}

  async run(o: { wait: boolean }): Promise<{ skipped: boolean; batch?: BatchResult }> {
    return this.db.transaction().execute(async (trx) => {
      if (o.wait) await sql`SELECT pg_advisory_xact_lock(${ANCHOR_LOCK})`.execute(trx);
      else {
        const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${ANCHOR_LOCK}) AS ok`.execute(trx);
        if (!got.rows[0]?.ok) return { skipped: true };
      }
      const pending = await this.repo.claimPendingAcrossTenants(trx, this.maxLeaves);
      if (pending.length === 0) return { skipped: false };
      const contract = this.contract();
      const tree = buildAggregate(pending);
      const batchId = await this.repo.createBatch(trx, {
        chain_id: contract.chainId,
        network: contract.network,
        contract_address: contract.address,
        aggregate_root: tree.root,
        leaf_count: pending.length,
      });
      await this.repo.assignAcrossTenants(
        trx,
        batchId,
        pending.map((h, i) => ({ tenant_id: h.tenant_id, tree_index: h.tree_index, leaf_index: i, proof: tree.leaves[i].proof })),
      );
      const end = this.metrics?.transactionSeconds.startTimer({ network: contract.network });
      const onChain = await contract.anchor(tree.root, pending.length).catch((e: unknown) => {
        this.metrics?.transactions.inc({ network: contract.network, outcome: 'failed' });
        throw new DependencyUnavailableError(`the ${contract.network} chain did not take the anchor transaction: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, { cause: e });
      });
      end?.();
      this.metrics?.transactions.inc({ network: contract.network, outcome: 'anchored' });
      this.metrics?.headsAnchored.inc({ network: contract.network }, pending.length);
      await this.repo.markAnchored(trx, batchId, { tx_hash: onChain.txHash, block_number: onChain.blockNumber, anchored_at: onChain.anchoredAt });
      this.logger.info({ batchId, leaves: pending.length, root: tree.root, tx: onChain.txHash, block: onChain.blockNumber, network: contract.network }, 'aggregate root anchored');
      return { skipped: false, batch: { batch_id: batchId, aggregate_root: tree.root, leaf_count: pending.length, tx_hash: onChain.txHash, block_number: onChain.blockNumber } };
    });
  }
}
