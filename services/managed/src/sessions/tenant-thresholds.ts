/**
 * The tenant settings the managed service uses, read through the owner's read model (@agw/shared
 * tenants/tenant-settings.read-model.ts: the gateway owns and writes tenant_settings, saved through PATCH
 * /api/dashboard/settings; this service never queries it), cached for a few seconds (a change applies
 * within that time):
 * - the auto-interrupt threshold: `session_anomaly_threshold` (0-1) or the service default
 *   (SESSION_ANOMALY_THRESHOLD, 0.8);
 * - `approval_expiry_seconds`, when set: how long a platform confirmation request waits for a human.
 */
import type { TenantSessionSettings, TenantSettingsReadModel } from '@agw/shared';

export class TenantThresholds {
  private readonly cache = new Map<string, { settings: TenantSessionSettings; until: number }>();

  constructor(
    private readonly settings: Pick<TenantSettingsReadModel, 'current'>,
    private readonly fallback: number,
    private readonly ttlMs = 5000,
  ) {}

  async threshold(tenantId: string): Promise<number> {
    return (await this.session(tenantId)).anomalyThreshold ?? this.fallback;
  }

  async approvalExpirySeconds(tenantId: string): Promise<number | undefined> {
    return (await this.session(tenantId)).approvalExpirySeconds;
  }

  private async session(tenantId: string): Promise<TenantSessionSettings> {
    const hit = this.cache.get(tenantId);
    if (hit && hit.until > Date.now()) return hit.settings;
    const settings = (await this.settings.current(tenantId)).session;
    this.cache.set(tenantId, { settings, until: Date.now() + this.ttlMs });
    return settings;
  }
}
