/**
 * Queries on tenant_settings: the gateway owns the table and is its only writer (policy keys live in the policy
 * service). Other services read the keys they use through @agw/shared TenantSettingsReadModel, never the
 * table; a change is published (`changes.settings.<tenant>`) after it committed, by the settings routes.
 */
import type { Conn, Db } from '@agw/shared';

export class SettingsRepository {
  constructor(private readonly db: Db) {}

  /** `conn`: a caller's transaction reads through its own connection (approval-expiry.ts records inside one). */
  async get(tenantId: string, conn: Conn = this.db): Promise<Record<string, unknown>> {
    const row = await conn.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).executeTakeFirst();
    return (row?.settings as Record<string, unknown>) ?? {};
  }

  /**
   * Shallow-merge `patch` into the stored settings; keys set to undefined are removed. `check` sees the
   * stored settings under the row's lock and may throw to refuse the change (nothing is written then).
   */
  async merge(tenantId: string, patch: Record<string, unknown>, check?: (stored: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
      check?.((row?.settings as Record<string, unknown>) ?? {});
      const next: Record<string, unknown> = { ...((row?.settings as Record<string, unknown>) ?? {}) };
      for (const [k, v] of Object.entries(patch)) {
        if (v === undefined) delete next[k];
        else next[k] = v;
      }
      await trx
        .insertInto('tenant_settings')
        .values({ tenant_id: tenantId, settings: JSON.stringify(next) })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ settings: JSON.stringify(next), updated_at: new Date() }))
        .execute();
      return next;
    });
  }

  /** The tenant's own slug (the default slug of its public dashboard). */
  async tenantSlug(tenantId: string): Promise<string> {
    const row = await this.db.selectFrom('tenants').select('slug').where('id', '=', tenantId).executeTakeFirstOrThrow();
    return row.slug;
  }
}
