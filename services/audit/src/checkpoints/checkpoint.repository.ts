/** The only queries on merkle_checkpoints. Tenant id first, always. */
import type { Conn, Database, Db } from '@agw/shared';
import { type Selectable, type Transaction, sql } from 'kysely';

export type StoredCheckpoint = Omit<Selectable<Database['merkle_checkpoints']>, 'signed_at'> & { signed_at: string };

const columns = ['tenant_id', 'tree_size', 'tree_index', 'merkle_root', 'origin', 'key_name', 'note', 'checkpoint_sha256', 'signed_at'] as const;

const toCheckpoint = (r: Record<(typeof columns)[number], unknown>): StoredCheckpoint => ({
  tenant_id: r.tenant_id as string,
  tree_size: Number(r.tree_size),
  tree_index: Number(r.tree_index),
  merkle_root: r.merkle_root as string,
  origin: r.origin as string,
  key_name: r.key_name as string,
  note: r.note as string,
  checkpoint_sha256: r.checkpoint_sha256 as string,
  signed_at: (r.signed_at as Date).toISOString(),
});

export class CheckpointRepository {
  constructor(readonly db: Db) {}

  async latest(tenantId: string, conn: Conn = this.db): Promise<StoredCheckpoint | undefined> {
    const r = await conn.selectFrom('merkle_checkpoints').select(columns).where('tenant_id', '=', tenantId).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
    return r ? toCheckpoint(r) : undefined;
  }

  async atSize(tenantId: string, treeSize: number): Promise<StoredCheckpoint | undefined> {
    const r = await this.db.selectFrom('merkle_checkpoints').select(columns).where('tenant_id', '=', tenantId).where('tree_size', '=', treeSize).executeTakeFirst();
    return r ? toCheckpoint(r) : undefined;
  }

  /** Oldest first. */
  async list(tenantId: string, limit = 10_000): Promise<StoredCheckpoint[]> {
    const rows = await this.db.selectFrom('merkle_checkpoints').select(columns).where('tenant_id', '=', tenantId).orderBy('tree_size', 'desc').limit(limit).execute();
    return rows.map(toCheckpoint).reverse();
  }

  async insert(tenantId: string, c: Omit<StoredCheckpoint, 'tenant_id' | 'signed_at'>, conn: Conn): Promise<void> {
    await conn
      .insertInto('merkle_checkpoints')
      .values({ tenant_id: tenantId, ...c })
      .onConflict((oc) => oc.columns(['tenant_id', 'tree_size']).doNothing())
      .execute();
  }

  /** Serialises the signers of one tenant (transaction-scoped advisory lock keyed by the tenant). */
  async lockTenant(tenantId: string, trx: Transaction<Database>): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`agw-checkpoint:${tenantId}`}))`.execute(trx);
  }
}
