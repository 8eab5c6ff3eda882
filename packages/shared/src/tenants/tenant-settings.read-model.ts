/**
 * The read model of `tenant_settings` for the services that do not own it. The gateway owns the table: it
 * is the only writer (services/gateway/src/tenants/settings.repository.ts, PATCH /api/dashboard/settings)
 * and publishes `changes.settings.<tenant>` on NATS after each committed change (bus/tenant-changes.ts).
 * Every other service reads the few keys it uses through this module, never the table, and never the
 * gateway's other keys:
 * - the webhook service: the webhook URL, its signing secret (sealed by the vault), the event filter and the
 *   SIEM export (`webhook`);
 * - the managed service: the session auto-interrupt threshold and the approval expiry (`session`).
 *
 * Why a read model on the owner's row and not a copy of it: the row committed by the gateway is the one
 * truth on every replica and after every restart, so no change can be lost between the owner and a reader,
 * and a rotated webhook secret is never signed with the old one (`current` reads the row as committed;
 * `cached` is dropped by the change message, on reconnect, and after TENANT_CACHE_MS at the latest).
 */
import type { Subscription } from 'nats';
import type { Bus } from '../bus/bus';
import { TENANT_CACHE_MS, TenantCache, onTenantChange } from '../bus/tenant-changes';
import type { Db } from '../db/database';
import { webhookUrlOf } from '../webhook-settings';

/** A tenant's webhook and SIEM export settings. */
export interface TenantWebhookSettings {
  url: string | null;
  /** a secret stored in clear before sealing existed (re-sealed by the gateway's start-up sweep) */
  secret: string | null;
  /** the secret sealed by the vault (opened by the webhook service when an attempt is signed) */
  sealedSecret: string | null;
  /** undefined when the tenant never chose (then the defaults apply) */
  events: string[] | undefined;
  /** where decisions stream as OCSF events (the SIEM export), or null */
  siem: { url: string; format: 'splunk_hec' | 'jsonl'; sealedToken: string | null } | null;
}

/** A tenant's managed-session settings; undefined: the tenant never set it (the service's default applies). */
export interface TenantSessionSettings {
  /** `session_anomaly_threshold`, 0-1 */
  anomalyThreshold: number | undefined;
  /** `approval_expiry_seconds`, > 0: how long a platform confirmation request waits for a human */
  approvalExpirySeconds: number | undefined;
}

/** The keys of a tenant's settings that other services read. */
export interface TenantSettingsView {
  webhook: TenantWebhookSettings;
  session: TenantSessionSettings;
}

function siemOf(s: Record<string, unknown>): TenantWebhookSettings['siem'] {
  const e = s.siem_export as { url?: unknown; format?: unknown } | undefined;
  if (!e || typeof e.url !== 'string' || (e.format !== 'splunk_hec' && e.format !== 'jsonl')) return null;
  return { url: e.url, format: e.format, sealedToken: typeof s.siem_token_sealed === 'string' && s.siem_token_sealed ? s.siem_token_sealed : null };
}

/** The view of a stored settings object (the keys other services read, typed; the rest left out). */
export function tenantSettingsView(s: Record<string, unknown>): TenantSettingsView {
  const threshold = s.session_anomaly_threshold;
  const expiry = s.approval_expiry_seconds;
  return {
    webhook: {
      url: webhookUrlOf(s),
      secret: typeof s.webhook_secret === 'string' && s.webhook_secret ? s.webhook_secret : null,
      sealedSecret: typeof s.webhook_secret_sealed === 'string' && s.webhook_secret_sealed ? s.webhook_secret_sealed : null,
      events: Array.isArray(s.webhook_events) ? s.webhook_events.filter((e): e is string => typeof e === 'string') : undefined,
      siem: siemOf(s),
    },
    session: {
      anomalyThreshold: typeof threshold === 'number' && threshold >= 0 && threshold <= 1 ? threshold : undefined,
      approvalExpirySeconds: typeof expiry === 'number' && expiry > 0 ? expiry : undefined,
    },
  };
}

export class TenantSettingsReadModel {
  private readonly cache: TenantCache<TenantSettingsView>;

  constructor(
    private readonly db: Db,
    /** the safety net of `cached`: how long a lost change message can leave an entry stale */
    cacheMs = TENANT_CACHE_MS,
  ) {
    this.cache = new TenantCache<TenantSettingsView>(cacheMs);
  }

  /** The settings as committed now (one query). */
  async current(tenantId: string): Promise<TenantSettingsView> {
    const row = await this.db.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).executeTakeFirst();
    return tenantSettingsView((row?.settings ?? {}) as Record<string, unknown>);
  }

  /** The settings as of the last change this process was told about (followChanges), or `cacheMs` ago at most. */
  cached(tenantId: string): Promise<TenantSettingsView> {
    return this.cache.get(tenantId, '', () => this.current(tenantId));
  }

  /** Drop a tenant's cached settings when the gateway publishes a change of them (everything on a reconnect). */
  followChanges(bus: Pick<Bus, 'nc' | 'prefix'>): Subscription {
    return onTenantChange(bus, 'settings', (tenantId) => this.cache.invalidate(tenantId));
  }
}
