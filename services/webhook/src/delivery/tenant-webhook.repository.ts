/**
 * Reads a tenant's webhook and SIEM export settings from tenant_settings (owned and written by the gateway; read-only
 * here). Every delivery attempt reads them (`get`), so a changed secret or URL applies at once. Turning an
 * event into a delivery (or skipping it: most tenants have no webhook) reads them through a per-tenant
 * cache (`cached`): dropped when the gateway publishes the tenant's settings change on NATS
 * (`followChanges`), and after WEBHOOK_SETTINGS_CACHE_MS at the latest (@agw/shared bus/tenant-changes.ts).
 */
import { type Bus, type Db, TENANT_CACHE_MS, TenantCache, onTenantChange, webhookUrlOf } from '@agw/shared';

/** The safety net of the settings cache: how long a lost change message can leave an entry stale. */
export const WEBHOOK_SETTINGS_CACHE_MS = TENANT_CACHE_MS;

export interface TenantWebhook {
  url: string | null;
  /** a secret stored in clear before sealing existed (re-sealed by the gateway's start-up sweep) */
  secret: string | null;
  /** the secret sealed by the vault (opened by WebhookSecrets when an attempt is signed) */
  sealedSecret: string | null;
  /** undefined when the tenant never chose (then the defaults apply) */
  events: string[] | undefined;
  /** where decisions stream as OCSF events (the SIEM export), or null */
  siem: { url: string; format: 'splunk_hec' | 'jsonl'; sealedToken: string | null } | null;
}

function siemOf(s: Record<string, unknown>): TenantWebhook['siem'] {
  const e = s.siem_export as { url?: unknown; format?: unknown } | undefined;
  if (!e || typeof e.url !== 'string' || (e.format !== 'splunk_hec' && e.format !== 'jsonl')) return null;
  return { url: e.url, format: e.format, sealedToken: typeof s.siem_token_sealed === 'string' && s.siem_token_sealed ? s.siem_token_sealed : null };
}

export class TenantWebhookRepository {
  private readonly cache = new TenantCache<TenantWebhook>(WEBHOOK_SETTINGS_CACHE_MS);

  constructor(private readonly db: Db) {}

  /** The settings as of the last change this process was told about (or WEBHOOK_SETTINGS_CACHE_MS ago). */
  cached(tenantId: string): Promise<TenantWebhook> {
    return this.cache.get(tenantId, '', () => this.get(tenantId));
  }

  /** Drop a tenant's cached settings when the gateway publishes a change of them. */
  followChanges(bus: Pick<Bus, 'nc' | 'prefix'>): void {
    onTenantChange(bus, 'settings', (tenantId) => this.cache.invalidate(tenantId));
  }

  async get(tenantId: string): Promise<TenantWebhook> {
    const row = await this.db.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).executeTakeFirst();
    const s = (row?.settings ?? {}) as Record<string, unknown>;
    return {
      url: webhookUrlOf(s),
      secret: typeof s.webhook_secret === 'string' && s.webhook_secret ? s.webhook_secret : null,
      sealedSecret: typeof s.webhook_secret_sealed === 'string' && s.webhook_secret_sealed ? s.webhook_secret_sealed : null,
      events: Array.isArray(s.webhook_events) ? s.webhook_events.filter((e): e is string => typeof e === 'string') : undefined,
      siem: siemOf(s),
    };
  }
}
