/**
 * The queries on anchor_contracts / anchor_batches / anchor_tree_heads, except the pending-heads gauge of
 * anchor-lag.metrics.ts (one count at scrape time) and the backup's row copies (packages/shared db/backup.ts).
 * Tenant reads take the tenant id first and filter on it; the batch job's cross-tenant statements say so in
 * their name.
 */
import type { Conn, Database, Db } from '@agw/shared';
import { type Transaction, sql } from 'kysely';
import type { ContractAddressStore } from '../chain/anchor-contract';

/** first key of the contract deployment's advisory lock ("andp"; the second is the chain id) */
export const ANCHOR_DEPLOY_LOCK = 0x616e6470;

export interface ReceivedHead {
  tenant_id: string;
  tree_index: number;
  tree_size: number;
  merkle_root: string;
  period_start: string;
  period_end: string;
  /** SHA-256 of its signed checkpoint note, once known (covered by its aggregate leaf when anchored) */
  checkpoint_sha256?: string | null;
}

/** A tenant tree head as anchored, joined with its batch. */
export interface AnchoredHead extends ReceivedHead {
  batch_id: number;
  leaf_index: number;
  aggregate_proof: string[];
  aggregate_root: string;
  leaf_count: number;
  tx_hash: string;
  block_number: number;
  anchored_at: string;
  chain_id: number;
  network: string;
  contract_address: string;
}

const iso = (d: unknown) => (d instanceof Date ? d.toISOString() : String(d));

/** A tree head row as received: numbers as numbers, times as ISO text. */
function toReceived<R extends { tree_index: unknown; tree_size: unknown; period_start: unknown; period_end: unknown }>(r: R) {
  return { ...r, tree_index: Number(r.tree_index), tree_size: Number(r.tree_size), period_start: iso(r.period_start), period_end: iso(r.period_end) };
}

/** Every tenant's heads not in a batch yet, in leaf order (tenant, then tree index). */
function pendingAcrossTenants(db: Conn, limit: number) {
  return db
    .selectFrom('anchor_tree_heads')
    .select(['tenant_id', 'tree_index', 'tree_size', 'merkle_root', 'period_start', 'period_end', 'checkpoint_sha256'])
    .where('batch_id', 'is', null)
    .orderBy('tenant_id')
    .orderBy('tree_index')
    .limit(limit);
}

function toAnchored(r: Record<string, unknown>): AnchoredHead {
  return {
    tenant_id: r.tenant_id as string,
    tree_index: Number(r.tree_index),
    tree_size: Number(r.tree_size),
    merkle_root: r.merkle_root as string,
    period_start: iso(r.period_start),
    period_end: iso(r.period_end),
    batch_id: Number(r.batch_id),
    leaf_index: Number(r.leaf_index),
    aggregate_proof: (r.aggregate_proof as string[]) ?? [],
    aggregate_root: r.aggregate_root as string,
    leaf_count: Number(r.leaf_count),
    tx_hash: r.tx_hash as string,
    block_number: Number(r.block_number),
    anchored_at: iso(r.anchored_at),
    chain_id: Number(r.chain_id),
    network: r.network as string,
    contract_address: r.contract_address as string,
    checkpoint_sha256: (r.checkpoint_sha256 as string | null) ?? null,
  };
}

export class AnchorRepository implements ContractAddressStore {
  constructor(readonly db: Db) {}

  async contractAddress(chainId: number): Promise<string | undefined> {
    const r = await this.db.selectFrom('anchor_contracts').select('address').where('chain_id', '=', chainId).executeTakeFirst();
    return r?.address;
  }

  /**
   * A session-level advisory lock (key "andp", chain id) held on one connection while `fn` runs; `fn` reads
   * and saves the address through this repository on that connection (`locked`), never a second one from
   * the pool: with a pool of one (DB_POOL_MAX=1) the anchor service could not connect its chain.
   */
  async withDeployLock<T>(chainId: number, fn: (locked: AnchorRepository) => Promise<T>): Promise<T> {
    return this.db.connection().execute(async (conn) => {
      await sql`SELECT pg_advisory_lock(${ANCHOR_DEPLOY_LOCK}, ${chainId})`.execute(conn);
      try {
        return await fn(new AnchorRepository(conn));
      } finally {
        await sql`SELECT pg_advisory_unlock(${ANCHOR_DEPLOY_LOCK}, ${chainId})`.execute(conn);
      }
    });
  }

  async saveContractAddress(chainId: number, address: string, txHash: string): Promise<void> {
    await this.db
      .insertInto('anchor_contracts')
      .values({ chain_id: chainId, address, deploy_tx_hash: txHash })
      .onConflict((oc) => oc.column('chain_id').doUpdateSet({ address, deploy_tx_hash: txHash, deployed_at: new Date() }))
      .execute();
  }

  /** Idempotent: a redelivered event or a repeated trigger changes nothing. */
  async recordTreeHead(tenantId: string, h: Omit<ReceivedHead, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('anchor_tree_heads')
      .values({ tenant_id: tenantId, tree_index: h.tree_index, tree_size: h.tree_size, merkle_root: h.merkle_root, period_start: h.period_start, period_end: h.period_end })
      .onConflict((oc) => oc.columns(['tenant_id', 'tree_index']).doNothing())
      .execute();
  }

  private anchoredQuery(conn: Conn) {
    return conn
      .selectFrom('anchor_tree_heads as h')
      .innerJoin('anchor_batches as b', 'b.id', 'h.batch_id')
      .select([
        'h.tenant_id',
        'h.tree_index',
        'h.tree_size',
        'h.merkle_root',
        'h.period_start',
        'h.period_end',
        'h.batch_id',
        'h.leaf_index',
        'h.aggregate_proof',
        'h.checkpoint_sha256',
        'b.aggregate_root',
        'b.leaf_count',
        'b.tx_hash',
        'b.block_number',
        'b.anchored_at',
        'b.chain_id',
        'b.network',
        'b.contract_address',
      ])
      .where('b.status', '=', 'anchored');
  }

  async latestAnchored(tenantId: string): Promise<AnchoredHead | undefined> {
    const r = await this.anchoredQuery(this.db).where('h.tenant_id', '=', tenantId).orderBy('h.tree_index', 'desc').limit(1).executeTakeFirst();
    return r ? toAnchored(r as Record<string, unknown>) : undefined;
  }

  async listAnchored(tenantId: string, limit = 1000): Promise<AnchoredHead[]> {
    const rows = await this.anchoredQuery(this.db).where('h.tenant_id', '=', tenantId).orderBy('h.tree_index', 'desc').limit(limit).execute();
    return rows.map((r) => toAnchored(r as Record<string, unknown>)).reverse();
  }

  async anchoredCount(tenantId: string): Promise<number> {
    return this.countHeads(tenantId, 'is not');
  }

  async pendingCount(tenantId: string): Promise<number> {
    return this.countHeads(tenantId, 'is');
  }

  /** The tenant's tree heads in a batch (`is not`: anchored or being anchored) or in none yet (`is`: pending). */
  private async countHeads(tenantId: string, inBatch: 'is' | 'is not'): Promise<number> {
    const r = await this.db
      .selectFrom('anchor_tree_heads')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('batch_id', inBatch, null)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async latestReceived(tenantId: string): Promise<ReceivedHead | undefined> {
    const r = await this.db
      .selectFrom('anchor_tree_heads')
      .select(['tenant_id', 'tree_index', 'tree_size', 'merkle_root', 'period_start', 'period_end'])
      .where('tenant_id', '=', tenantId)
      .orderBy('tree_index', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r ? toReceived(r) : undefined;
  }

  /** Cross-tenant (batch job): pending heads in leaf order, not locked (what the run will probably claim). */
  async listPendingAcrossTenants(limit: number): Promise<ReceivedHead[]> {
    return (await pendingAcrossTenants(this.db, limit).execute()).map(toReceived);
  }

  /** Cross-tenant (batch job): pending heads in leaf order, locked for this transaction. */
  async claimPendingAcrossTenants(trx: Transaction<Database>, limit: number): Promise<ReceivedHead[]> {
    return (await pendingAcrossTenants(trx, limit).forUpdate().execute()).map(toReceived);
  }

  async createBatch(trx: Transaction<Database>, b: { chain_id: number; network: string; contract_address: string; aggregate_root: string; leaf_count: number }): Promise<number> {
    const r = await trx.insertInto('anchor_batches').values(b).returning('id').executeTakeFirstOrThrow();
    return Number(r.id);
  }

  /** Cross-tenant (batch job): attach each head to the batch with its leaf index and aggregate proof. */
  async assignAcrossTenants(
    trx: Transaction<Database>,
    batchId: number,
    entries: Array<{ tenant_id: string; tree_index: number; leaf_index: number; proof: string[]; checkpoint_sha256?: string | null }>,
  ): Promise<void> {
    for (const e of entries) {
      await trx
        .updateTable('anchor_tree_heads')
        .set({ batch_id: batchId, leaf_index: e.leaf_index, aggregate_proof: JSON.stringify(e.proof), checkpoint_sha256: e.checkpoint_sha256 ?? null })
        .where('tenant_id', '=', e.tenant_id)
        .where('tree_index', '=', e.tree_index)
        .execute();
    }
  }

  async markAnchored(trx: Transaction<Database>, batchId: number, a: { tx_hash: string; block_number: number; anchored_at: string }): Promise<void> {
    await trx.updateTable('anchor_batches').set({ status: 'anchored', tx_hash: a.tx_hash, block_number: a.block_number, anchored_at: new Date(a.anchored_at) }).where('id', '=', batchId).execute();
  }

  /** Cross-tenant (scheduler, health). */
  async statsAcrossTenants(): Promise<{ pending: number; last_anchor_at: string | null; last_anchor_hour_start: number | null }> {
    const r = await sql<{ pending: string; last: Date | null }>`
      SELECT (SELECT count(*) FROM anchor_tree_heads WHERE batch_id IS NULL) AS pending,
             (SELECT max(anchored_at) FROM anchor_batches WHERE status = 'anchored') AS last`.execute(this.db);
    const last = r.rows[0]?.last ?? null;
    return {
      pending: Number(r.rows[0]?.pending ?? 0),
      last_anchor_at: last ? last.toISOString() : null,
      last_anchor_hour_start: last ? Math.floor(last.getTime() / 3_600_000) * 3_600_000 : null,
    };
  }
}
