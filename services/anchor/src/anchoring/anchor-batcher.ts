/**
 * One anchoring run: every pending tenant tree head goes into one aggregate RFC 9162 tree, its root is
 * written on chain in one transaction, and each head keeps its leaf index and proof. The run holds a
 * transaction-scoped Postgres advisory lock, so with several replicas exactly one writes; the schedule
 * skips when another replica holds it, a trigger waits. If the chain write fails the database
 * transaction rolls back and the heads stay pending for the next run (the contract tolerates a root
 * anchored twice). Each head's leaf covers the SHA-256 of its signed checkpoint (asked of the audit
 * service, which signs what is pending first), so the transaction commits to the signed heads themselves;
 * a head without a signed checkpoint (vault or audit unreachable, a refused fork) is anchored with the
 * short leaf and logged, never held back.
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

/** The SHA-256 of a tenant's signed checkpoint of a tree size, or undefined (none can be had now). */
export type CheckpointDigests = (tenantId: string, treeSize: number) => Promise<string | undefined>;

export class AnchorBatcher {
  constructor(
    private readonly db: Db,
    private readonly repo: AnchorRepository,
    private readonly contract: () => AnchorContract,
    private readonly logger: Logger,
    private readonly maxLeaves: number,
    private readonly metrics?: AnchorMetrics,
    private readonly checkpointOf?: CheckpointDigests,
  ) {}

  /** The pending heads with the SHA-256 of their signed checkpoints (16 look-ups at a time). */
  private async withCheckpoints<T extends { tenant_id: string; tree_size: number; checkpoint_sha256?: string | null }>(heads: T[]): Promise<T[]> {
    const lookup = this.checkpointOf;
    if (!lookup) return heads;
    const out: T[] = [];
    for (let i = 0; i < heads.length; i += 16) {
      out.push(
        ...(await Promise.all(
          heads.slice(i, i + 16).map(async (h) => {
            if (h.checkpoint_sha256) return h;
            const digest = await lookup(h.tenant_id, h.tree_size).catch((e: unknown) => {
              this.logger.warn({ tenantId: h.tenant_id, tree_size: h.tree_size, err: e }, 'no signed checkpoint for a tree head: anchored without it');
              return undefined;
            });
            return /^[0-9a-f]{64}$/.test(digest ?? '') ? { ...h, checkpoint_sha256: digest } : h;
          }),
        )),
      );
    }
    return out;
  }

  async run(o: { wait: boolean }): Promise<{ skipped: boolean; batch?: BatchResult }> {
    // The checkpoints of the pending heads are looked up first, outside the transaction: the audit service
    // may sign on the way (its own transactions and the vault), and the run's lock and connection are not
    // held meanwhile. A head that arrives in between is looked up inside.
    const known = new Map<string, string>();
    if (this.checkpointOf) {
      for (const h of await this.withCheckpoints(await this.repo.listPendingAcrossTenants(this.maxLeaves))) {
        if (h.checkpoint_sha256) known.set(`${h.tenant_id}:${h.tree_size}`, h.checkpoint_sha256);
      }
    }
    return this.db.transaction().execute(async (trx) => {
      if (o.wait) await sql`SELECT pg_advisory_xact_lock(${ANCHOR_LOCK})`.execute(trx);
      else {
        const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${ANCHOR_LOCK}) AS ok`.execute(trx);
        if (!got.rows[0]?.ok) return { skipped: true };
      }
      const claimed = (await this.repo.claimPendingAcrossTenants(trx, this.maxLeaves)).map((h) => ({ ...h, checkpoint_sha256: h.checkpoint_sha256 ?? known.get(`${h.tenant_id}:${h.tree_size}`) ?? null }));
      const pending = await this.withCheckpoints(claimed);
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
        pending.map((h, i) => ({ tenant_id: h.tenant_id, tree_index: h.tree_index, leaf_index: i, proof: tree.leaves[i].proof, checkpoint_sha256: h.checkpoint_sha256 ?? null })),
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
