/**
 * The tenant's auto-interrupt threshold: the tenant setting `session_anomaly_threshold` (0-1, saved through
 * PATCH /api/dashboard/settings) or the service default (SESSION_ANOMALY_THRESHOLD, 0.8). Read from the
 * settings row the gateway owns, cached for a few seconds (a changed threshold applies within that time).
 */
import type { Db } from '@agw/shared';

export class TenantThresholds {
  private readonly cache = new Map<string, { value: number; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly fallback: number,
    private readonly ttlMs = 5000,
  ) {}

  async threshold(tenantId: string): Promise<number> {
    const hit = this.cache.get(tenantId);
    if (hit && hit.until > Date.now()) return hit.value;
    const row = await this.db.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).executeTakeFirst();
    const v = (row?.settings as Record<string, unknown> | undefined)?.session_anomaly_threshold;
    const value = typeof v === 'number' && v >= 0 && v <= 1 ? v : this.fallback;
    this.cache.set(tenantId, { value, until: Date.now() + this.ttlMs });
    return value;
  }
}
