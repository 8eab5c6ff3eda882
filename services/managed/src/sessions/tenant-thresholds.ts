/**
 * The tenant settings the managed service reads from the settings row the gateway owns (saved through
 * PATCH /api/dashboard/settings), cached for a few seconds (a change applies within that time):
 * - the auto-interrupt threshold: `session_anomaly_threshold` (0-1) or the service default
 *   (SESSION_ANOMALY_THRESHOLD, 0.8);
 * - `approval_expiry_seconds`, when set: how long a platform confirmation request waits for a human.
 */
import type { Db } from '@agw/shared';

export class TenantThresholds {
  private readonly cache = new Map<string, { settings: Record<string, unknown>; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly fallback: number,
    private readonly ttlMs = 5000,
  ) {}

  async threshold(tenantId: string): Promise<number> {
    const v = (await this.settings(tenantId)).session_anomaly_threshold;
    return typeof v === 'number' && v >= 0 && v <= 1 ? v : this.fallback;
  }

  async approvalExpirySeconds(tenantId: string): Promise<number | undefined> {
    const v = (await this.settings(tenantId)).approval_expiry_seconds;
    return typeof v === 'number' && v > 0 ? v : undefined;
  }

  private async settings(tenantId: string): Promise<Record<string, unknown>> {
    const hit = this.cache.get(tenantId);
    if (hit && hit.until > Date.now()) return hit.settings;
    const row = await this.db.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).executeTakeFirst();
    const settings = (row?.settings as Record<string, unknown> | undefined) ?? {};
    this.cache.set(tenantId, { settings, until: Date.now() + this.ttlMs });
    return settings;
  }
}
