/** The only queries on policy_bundle_sources. Tenant id first, always. */
import type { Database, Db } from '@agw/shared';
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';

/** A row of policy_bundle_sources, as the table declares it. */
export type StoredBundleSource = Selectable<Database['policy_bundle_sources']>;

const COLUMNS = [
  'tenant_id',
  'url',
  'public_key',
  'scope',
  'activation',
  'shadow_max_calls',
  'shadow_seconds',
  'etag',
  'last_polled_at',
  'last_outcome',
  'last_detail',
  'revision',
  'digest',
  'created_by',
  'created_at',
] as const;

/** A source whose last poll is older than `intervalMs` (or that was never polled). */
const pollDue = (intervalMs: number) => (eb: ExpressionBuilder<Database, 'policy_bundle_sources'>) =>
  eb.or([eb('last_polled_at', 'is', null), eb('last_polled_at', '<', sql<Date>`now() - ${`${intervalMs} milliseconds`}::interval`)]);

export class BundleSourceRepository {
  constructor(private readonly db: Db) {}

  async get(tenantId: string): Promise<StoredBundleSource | undefined> {
    return this.db.selectFrom('policy_bundle_sources').select(COLUMNS).where('tenant_id', '=', tenantId).executeTakeFirst();
  }

  /** Registers (or replaces) the tenant's source; a new source starts without an ETag. */
  async put(tenantId: string, s: Pick<StoredBundleSource, 'url' | 'public_key' | 'scope' | 'activation' | 'shadow_max_calls' | 'shadow_seconds' | 'created_by'>): Promise<StoredBundleSource> {
    const values = { ...s, etag: null, last_polled_at: null, last_outcome: null, last_detail: null, revision: null, digest: null };
    return this.db
      .insertInto('policy_bundle_sources')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  }

  async delete(tenantId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('policy_bundle_sources').where('tenant_id', '=', tenantId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Claims the tenant's source for a poll when its last poll is older than `intervalMs` (0: now, whatever
   * the last): one replica polls it, the others find it claimed.
   */
  async claim(tenantId: string, intervalMs: number): Promise<StoredBundleSource | undefined> {
    return this.db
      .updateTable('policy_bundle_sources')
      .set({ last_polled_at: new Date() })
      .where('tenant_id', '=', tenantId)
      .where(pollDue(intervalMs))
      .returning(COLUMNS)
      .executeTakeFirst();
  }

  /** The tenants whose source is due for a poll (at most `limit`). */
  async due(intervalMs: number, limit = 100): Promise<string[]> {
    const rows = await this.db
      .selectFrom('policy_bundle_sources')
      .select('tenant_id')
      .where(pollDue(intervalMs))
      .orderBy('last_polled_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.tenant_id);
  }

  async outcome(tenantId: string, o: { outcome: string; detail: string; etag?: string | null; revision?: string | null; digest?: string | null }): Promise<void> {
    await this.db
      .updateTable('policy_bundle_sources')
      .set({
        last_outcome: o.outcome,
        last_detail: o.detail,
        ...(o.etag !== undefined ? { etag: o.etag } : {}),
        ...(o.revision !== undefined ? { revision: o.revision } : {}),
        ...(o.digest !== undefined ? { digest: o.digest } : {}),
      })
      .where('tenant_id', '=', tenantId)
      .execute();
  }
}
