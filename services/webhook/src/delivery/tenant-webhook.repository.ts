/**
 * A tenant's webhook and SIEM export settings, read through the owner's read model (@agw/shared
 * tenants/tenant-settings.read-model.ts: the gateway owns and writes tenant_settings; this service never
 * queries it). Every delivery attempt reads them as committed (`get`), so a changed secret or URL applies
 * at once. Turning an event into a delivery (or skipping it: most tenants have no webhook) reads them
 * through the read model's per-tenant cache (`cached`): dropped when the gateway publishes the tenant's
 * settings change on NATS (`followChanges`), and after WEBHOOK_SETTINGS_CACHE_MS at the latest.
 */
import { type Bus, TENANT_CACHE_MS, type TenantSettingsReadModel, type TenantWebhookSettings } from '@agw/shared';

/** The safety net of the settings cache: how long a lost change message can leave an entry stale. */
export const WEBHOOK_SETTINGS_CACHE_MS = TENANT_CACHE_MS;

export type TenantWebhook = TenantWebhookSettings;

export class TenantWebhookRepository {
  constructor(private readonly settings: TenantSettingsReadModel) {}

  /** The settings as of the last change this process was told about (or WEBHOOK_SETTINGS_CACHE_MS ago). */
  async cached(tenantId: string): Promise<TenantWebhook> {
    return (await this.settings.cached(tenantId)).webhook;
  }

  /** Drop a tenant's cached settings when the gateway publishes a change of them. */
  followChanges(bus: Pick<Bus, 'nc' | 'prefix'>): void {
    this.settings.followChanges(bus);
  }

  /** The settings as committed now. */
  async get(tenantId: string): Promise<TenantWebhook> {
    return (await this.settings.current(tenantId)).webhook;
  }
}
