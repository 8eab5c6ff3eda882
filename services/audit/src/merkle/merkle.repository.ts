/**
 * The only queries on merkle_nodes / merkle_tree_heads; the chain's heads (audit_chain_heads) are read here for
 * their record counts, joined with the tree heads. audit_records is read through its owner's read models
 * (chain/audit-record.repository.ts: `MerkleLeafReads`, `RECORD_BY_HASH_SQL`). Tenant id first, always; the
 * two cross-tenant reads the hourly build needs say so in their name.
 */
import { type Conn, type Database, type Db, recordIdOf } from '@agw/shared';
import { CompiledQuery, type Selectable, sql } from 'kysely';
import { type LeafRecord, MerkleLeafReads, RECORD_BY_HASH_SQL } from '../chain/audit-record.repository';
import type { NodeKey } from './rfc9162';

/**
 * A tree head as its table type defines it, with its times as ISO 8601 text (how every reader wants them),
 * and `from_record_id` / `to_record_id` as the tenant sees them: the tenant's record ids (tenant_seq + 1) of
 * the first and last record the head added, i.e. `tree_size - records_added + 1` and `tree_size` (the build
 * adds the leaves right after the previous head, without a gap). The columns of the same name hold the
 * global row keys of those records (`audit_records.id`), which stay in this service (docs/audit.md,
 * "Record ids"); they are written from `NewTreeHead`'s `first_key` / `last_key` and never read back.
 */
export type TreeHead = Omit<Selectable<Database['merkle_tree_heads']>, 'period_start' | 'period_end' | 'built_at'> & {
  period_start: string;
  period_end: string;
  built_at: string;
};

/** What the build writes: a head without its tenant's record ids (derived on read) but with the row keys. */
export type NewTreeHead = Omit<TreeHead, 'tenant_id' | 'built_at' | 'from_record_id' | 'to_record_id'> & { first_key: number; last_key: number };

export type { LeafRecord };

const headColumns = [
  'tenant_id',
  'tree_index',
  'tree_size',
  'merkle_root',
  'records_added',
  'period_start',
  'period_end',
  'built_by',
  'built_at',
] as const;

function toHead(r: Record<(typeof headColumns)[number], unknown>): TreeHead {
  const size = Number(r.tree_size);
  const added = Number(r.records_added);
  return {
    tenant_id: r.tenant_id as string,
    tree_index: Number(r.tree_index),
    tree_size: size,
    merkle_root: r.merkle_root as string,
    records_added: added,
    // the tenant's record ids (leaves size - added .. size - 1, plus 1), not the stored row keys
    from_record_id: added > 0 ? recordIdOf(size - added) : null,
    to_record_id: added > 0 ? recordIdOf(size - 1) : null,
    period_start: (r.period_start as Date).toISOString(),
    period_end: (r.period_end as Date).toISOString(),
    built_by: r.built_by as string,
    built_at: (r.built_at as Date).toISOString(),
  };
}

const nodeKey = (k: NodeKey) => `${k.level}:${k.index}`;

/*
 * The reads of every proof request are statements whose text is made once (kysely's CompiledQuery.raw, still
 * run through the Db and its pool), and an inclusion proof reads its record and head in one of them: built
 * per request, in one query more, a proof allocated 106 KB, now 74 KB. Garbage collections are what is left
 * of the proof tail (docs/history/performance-2026.md, "Proofs, round 3").
 */

/** The record with a hash and the head to prove it against ($1 tenant, $2 record hash, $3 tree index). */
const recordAndHeadSql = (headFilter: string) => `
  SELECT r.tenant_seq, r.record_hash, h.*
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN LATERAL (${RECORD_BY_HASH_SQL}) r ON true
  LEFT JOIN LATERAL (SELECT ${headColumns.join(', ')} FROM merkle_tree_heads WHERE tenant_id = $1 ${headFilter}) h ON true`;
const RECORD_AND_HEAD = {
  latest: recordAndHeadSql('ORDER BY tree_index DESC LIMIT 1'),
  byIndex: recordAndHeadSql('AND tree_index = $3'),
};

/** Stored nodes by (level, index) ($1 tenant, $2 levels, $3 indexes, as array literals). */
const NODES_SQL = `
  SELECT n.level, n.idx, n.hash FROM merkle_nodes n
  JOIN unnest($2::smallint[], $3::bigint[]) AS k(level, idx) ON n.level = k.level AND n.idx = k.idx
  WHERE n.tenant_id = $1`;

/** What an inclusion proof needs of its record: its leaf index and hash. */
export interface ProvedRecord {
  tenant_seq: number;
  record_hash: string;
}

export class MerkleRepository {
  private readonly leafReads: MerkleLeafReads;

  constructor(readonly db: Db) {
    this.leafReads = new MerkleLeafReads(db);
  }

  async latestHead(tenantId: string, conn: Conn = this.db): Promise<TreeHead | undefined> {
    const r = await conn.selectFrom('merkle_tree_heads').select(headColumns).where('tenant_id', '=', tenantId).orderBy('tree_index', 'desc').limit(1).executeTakeFirst();
    return r ? toHead(r) : undefined;
  }

  /**
   * For an inclusion proof, in one statement: the tenant's record with this hash (its first, should a hash
   * repeat) and the tree head to prove it against (`treeIndex`, or the latest). Either may be absent.
   */
  async recordAndHead(tenantId: string, recordHash: string, treeIndex?: number): Promise<{ record?: ProvedRecord; head?: TreeHead }> {
    const query = treeIndex === undefined ? CompiledQuery.raw(RECORD_AND_HEAD.latest, [tenantId, recordHash]) : CompiledQuery.raw(RECORD_AND_HEAD.byIndex, [tenantId, recordHash, treeIndex]);
    const { rows } = await this.db.executeQuery<Record<(typeof headColumns)[number], unknown> & { tenant_seq: string | null; record_hash: string | null }>(query);
    const row = rows[0];
    return {
      record: row.tenant_seq === null ? undefined : { tenant_seq: Number(row.tenant_seq), record_hash: row.record_hash as string },
      head: row.tree_index === null ? undefined : toHead(row),
    };
  }

  /** Tree heads by index, in one query (absent ones are not in the map). */
  async headsByIndex(tenantId: string, treeIndexes: number[]): Promise<Map<number, TreeHead>> {
    const rows = await this.db.selectFrom('merkle_tree_heads').select(headColumns).where('tenant_id', '=', tenantId).where('tree_index', 'in', treeIndexes).execute();
    return new Map(rows.map((r) => [Number(r.tree_index), toHead(r)]));
  }

  /** Tree heads, oldest first (at most `limit`, the newest ones when there are more). */
  async listHeads(tenantId: string, limit = 10_000): Promise<TreeHead[]> {
    const rows = await this.db.selectFrom('merkle_tree_heads').select(headColumns).where('tenant_id', '=', tenantId).orderBy('tree_index', 'desc').limit(limit).execute();
    return rows.map(toHead).reverse();
  }

  /** Stored perfect-subtree hashes, one query whatever the number of keys. Missing keys are absent. */
  async nodes(tenantId: string, keys: NodeKey[], conn: Conn = this.db): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    if (keys.length === 0) return out;
    // the keys as two Postgres array literals (what pg would make of two arrays, for less garbage)
    let levels = '{';
    let indexes = '{';
    for (let i = 0; i < keys.length; i++) {
      const sep = i ? ',' : '';
      levels += sep + keys[i].level;
      indexes += sep + keys[i].index;
    }
    const { rows } = await conn.executeQuery<{ level: number; idx: string; hash: Buffer }>(CompiledQuery.raw(NODES_SQL, [tenantId, `${levels}}`, `${indexes}}`]));
    for (const r of rows) out.set(nodeKey({ level: r.level, index: Number(r.idx) }), r.hash);
    return out;
  }

  async insertNodes(tenantId: string, nodes: Array<NodeKey & { hash: Buffer }>, conn: Conn): Promise<void> {
    for (let i = 0; i < nodes.length; i += 5000) {
      const chunk = nodes.slice(i, i + 5000);
      await sql`
        INSERT INTO merkle_nodes (tenant_id, level, idx, hash)
        SELECT ${tenantId}::uuid, k.level, k.idx, k.hash
        FROM unnest(${chunk.map((n) => n.level)}::smallint[], ${chunk.map((n) => n.index)}::bigint[], ${chunk.map((n) => n.hash)}::bytea[]) AS k(level, idx, hash)`.execute(conn);
    }
  }

  async insertHead(tenantId: string, h: NewTreeHead, conn: Conn): Promise<TreeHead> {
    const row = await conn
      .insertInto('merkle_tree_heads')
      .values({
        tenant_id: tenantId,
        tree_index: h.tree_index,
        tree_size: h.tree_size,
        merkle_root: h.merkle_root,
        records_added: h.records_added,
        from_record_id: h.first_key,
        to_record_id: h.last_key,
        period_start: h.period_start,
        period_end: h.period_end,
        built_by: h.built_by,
      })
      .returning(headColumns)
      .executeTakeFirstOrThrow();
    return toHead(row);
  }

  /** The tenant's records from leaf `fromSeq` on, in chain order (audit_records' read model). */
  leaves(tenantId: string, fromSeq: number, limit: number, conn: Conn = this.db): Promise<LeafRecord[]> {
    return this.leafReads.leaves(tenantId, fromSeq, limit, conn);
  }

  /** Leaves of a tenant not yet covered by its latest tree head. */
  async pendingCount(tenantId: string, conn: Conn = this.db): Promise<number> {
    const r = await sql<{ pending: number }>`
      SELECT coalesce(h.record_count, 0) - coalesce((SELECT max(tree_size) FROM merkle_tree_heads WHERE tenant_id = ${tenantId}), 0) AS pending
      FROM (SELECT ${tenantId}::uuid AS tenant_id) t LEFT JOIN audit_chain_heads h ON h.tenant_id = t.tenant_id`.execute(conn);
    return Number(r.rows[0]?.pending ?? 0);
  }

  /** Cross-tenant (hourly build): tenants whose chain has records beyond their latest tree head. */
  async tenantsWithPendingAcrossTenants(conn: Conn): Promise<Array<{ tenant_id: string; last_period_end: Date | null }>> {
    const r = await sql<{ tenant_id: string; last_period_end: Date | null }>`
      SELECT h.tenant_id, t.last_period_end
      FROM audit_chain_heads h
      LEFT JOIN (SELECT tenant_id, max(tree_size) AS size, max(period_end) AS last_period_end FROM merkle_tree_heads GROUP BY tenant_id) t ON t.tenant_id = h.tenant_id
      WHERE h.record_count > coalesce(t.size, 0)
      ORDER BY h.tenant_id`.execute(conn);
    return r.rows;
  }

  /** Cross-tenant (health): totals over every tenant. */
  async statsAcrossTenants(): Promise<{ tree_heads: number; tenants: number; last_build_at: string | null; pending_records: number }> {
    const r = await sql<{ tree_heads: number; tenants: number; last_build_at: Date | null; pending_records: number }>`
      SELECT (SELECT count(*) FROM merkle_tree_heads)::bigint AS tree_heads,
             (SELECT count(DISTINCT tenant_id) FROM merkle_tree_heads)::bigint AS tenants,
             (SELECT max(built_at) FROM merkle_tree_heads) AS last_build_at,
             (SELECT coalesce(sum(h.record_count - coalesce(t.size, 0)), 0) FROM audit_chain_heads h
                LEFT JOIN (SELECT tenant_id, max(tree_size) AS size FROM merkle_tree_heads GROUP BY tenant_id) t ON t.tenant_id = h.tenant_id)::bigint AS pending_records`.execute(this.db);
    const s = r.rows[0];
    return { tree_heads: Number(s.tree_heads), tenants: Number(s.tenants), last_build_at: s.last_build_at ? s.last_build_at.toISOString() : null, pending_records: Number(s.pending_records) };
  }
}

export { nodeKey };
