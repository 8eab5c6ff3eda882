/**
 * Builds tree heads: for each tenant with records beyond its latest head, hash the new leaves (leaf bytes
 * = the 32 raw bytes of record_hash), store every perfect subtree that became complete, fold the root
 * from stored nodes and write the next head. Only O(log n) old nodes are read per build.
 *
 * Exactly one replica builds at a time: the run holds a transaction-scoped Postgres advisory lock. The
 * schedule uses try-lock (another replica is already building: skip); a trigger waits for the lock and
 * then builds what is still pending. Events are published after the commit, so a consumer never sees a
 * head that was rolled back.
 */
import type { Database, Db, Logger } from '@agw/shared';
import { type Transaction, sql } from 'kysely';
import type { MerkleMetrics } from './merkle.metrics';
import { type MerkleRepository, type TreeHead, nodeKey } from './merkle.repository';
import { type NodeKey, hashLeaf, hashNode, hashRange, nodesOfRange, recordLeafBytes } from './rfc9162';

/** pg advisory lock key of the Merkle build ("merkle" as a 31-bit number). */
export const MERKLE_BUILD_LOCK = 0x6d65726b;

export interface TreeBuiltSink {
  treeBuilt(head: TreeHead): Promise<void>;
}

export interface BuildOptions {
  /** only this tenant (trigger); otherwise every tenant with pending records */
  tenantId?: string;
  builtBy: 'schedule' | 'trigger';
  /** wait for a running build (trigger) instead of skipping (schedule) */
  wait: boolean;
  /** schedule: build a tenant only once per clock hour */
  oncePerHour?: boolean;
  now?: Date;
}

export class TreeBuilder {
  constructor(
    private readonly db: Db,
    private readonly repo: MerkleRepository,
    private readonly sink: TreeBuiltSink,
    private readonly logger: Logger,
    private readonly options: { maxLeavesPerBuild: number; metrics?: MerkleMetrics } = { maxLeavesPerBuild: 1_000_000 },
  ) {}

  /** Heads whose event could not be published yet: retried on the next build (the consumer is idempotent). */
  private readonly unpublished: TreeHead[] = [];

  private async publish(heads: TreeHead[]): Promise<void> {
    for (const head of heads) {
      try {
        await this.sink.treeBuilt(head);
      } catch (e) {
        this.unpublished.push(head);
        this.logger.warn({ err: e, tenantId: head.tenant_id, tree_index: head.tree_index }, 'tree-built event not published; retried on the next build');
      }
    }
  }

  async buildPending(o: BuildOptions): Promise<{ skipped: boolean; built: TreeHead[] }> {
    const now = o.now ?? new Date();
    const stopTimer = this.options.metrics?.buildSeconds.startTimer({ built_by: o.builtBy });
    const result = await this.db.transaction().execute(async (trx) => {
      if (o.wait) await sql`SELECT pg_advisory_xact_lock(${MERKLE_BUILD_LOCK})`.execute(trx);
      else {
        const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${MERKLE_BUILD_LOCK}) AS ok`.execute(trx);
        if (!got.rows[0]?.ok) return { skipped: true, built: [] as TreeHead[] };
      }
      let tenants: string[];
      if (o.tenantId) tenants = [o.tenantId];
      else {
        const hourStart = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
        tenants = (await this.repo.tenantsWithPendingAcrossTenants(trx))
          .filter((t) => !o.oncePerHour || !t.last_period_end || t.last_period_end.getTime() < hourStart)
          .map((t) => t.tenant_id);
      }
      const built: TreeHead[] = [];
      for (const tenantId of tenants) {
        // one tenant's failure (e.g. a gap in its chain) must not hold back every other tenant's head
        await sql`SAVEPOINT merkle_tenant`.execute(trx);
        try {
          const head = await this.buildTenant(trx, tenantId, now, o.builtBy);
          await sql`RELEASE SAVEPOINT merkle_tenant`.execute(trx);
          if (head) built.push(head);
        } catch (e) {
          await sql`ROLLBACK TO SAVEPOINT merkle_tenant`.execute(trx);
          if (o.tenantId) throw e;
          this.logger.error({ err: e, tenantId }, 'Merkle build of one tenant failed; the others go on');
        }
      }
      return { skipped: false, built };
    });
    if (!result.skipped) stopTimer?.();
    for (const h of result.built) {
      this.options.metrics?.headsBuilt.inc({ built_by: o.builtBy });
      this.options.metrics?.leavesAdded.inc({ built_by: o.builtBy }, h.records_added);
    }
    await this.publish([...this.unpublished.splice(0), ...result.built]);
    if (result.built.length) this.logger.info({ heads: result.built.length, builtBy: o.builtBy }, 'Merkle tree heads built');
    return result;
  }

  private async buildTenant(trx: Transaction<Database>, tenantId: string, now: Date, builtBy: string): Promise<TreeHead | undefined> {
    const latest = await this.repo.latestHead(tenantId, trx);
    const size0 = latest?.tree_size ?? 0;
    const records = await this.repo.leaves(tenantId, size0, this.options.maxLeavesPerBuild, trx);
    if (records.length === 0) return undefined;
    records.forEach((r, i) => {
      if (r.tenant_seq !== size0 + i) throw new Error(`audit chain of tenant ${tenantId} has a gap at leaf ${size0 + i}`);
    });
    const size1 = size0 + records.length;

    const fresh = new Map<string, Buffer>();
    const created: Array<NodeKey & { hash: Buffer }> = [];
    const put = (k: NodeKey, hash: Buffer) => {
      fresh.set(nodeKey(k), hash);
      created.push({ ...k, hash });
    };
    records.forEach((r, i) => put({ level: 0, index: size0 + i }, hashLeaf(recordLeafBytes(r.record_hash))));

    // Old nodes the new ones need: a left sibling at each level whose old count is odd, and the root's pieces.
    const isOld = (k: NodeKey) => k.index < Math.floor(size0 / 2 ** k.level);
    const needed: NodeKey[] = [];
    for (let level = 1; 2 ** level <= size1; level++) {
      const below = Math.floor(size0 / 2 ** (level - 1));
      if (below % 2 === 1 && Math.floor(size1 / 2 ** level) > Math.floor(size0 / 2 ** level)) needed.push({ level: level - 1, index: below - 1 });
    }
    for (const k of nodesOfRange([0, size1])) if (isOld(k)) needed.push(k);
    const old = await this.repo.nodes(tenantId, needed, trx);
    const get = (k: NodeKey): Buffer => {
      const h = fresh.get(nodeKey(k)) ?? old.get(nodeKey(k));
      if (!h) throw new Error(`Merkle node ${nodeKey(k)} of tenant ${tenantId} is missing`);
      return h;
    };
    for (let level = 1; 2 ** level <= size1; level++) {
      const from = Math.floor(size0 / 2 ** level);
      const to = Math.floor(size1 / 2 ** level);
      for (let i = from; i < to; i++) put({ level, index: i }, hashNode(get({ level: level - 1, index: 2 * i }), get({ level: level - 1, index: 2 * i + 1 })));
    }
    const root = hashRange([0, size1], get).toString('hex');
    await this.repo.insertNodes(tenantId, created, trx);
    const first = records[0];
    const periodStart = latest?.period_end ?? new Date(Math.min(Date.parse(first.requested_at), now.getTime())).toISOString();
    return this.repo.insertHead(
      tenantId,
      {
        tree_index: (latest?.tree_index ?? -1) + 1,
        tree_size: size1,
        merkle_root: root,
        records_added: records.length,
        first_key: first.id,
        last_key: records[records.length - 1].id,
        period_start: periodStart,
        period_end: now.toISOString(),
        built_by: builtBy,
      },
      trx,
    );
  }
}
