/**
 * Reads a tenant's webhook settings from tenant_settings (owned and written by the gateway; read-only
 * here). Read on every event and attempt, so a changed secret or URL applies at once.
 */
import type { Db } from '@agw/shared';

export interface TenantWebhook {
  url: string | null;
  secret: string | null;
  /** undefined when the tenant never chose (then the defaults apply) */
  events: string[] | undefined;
}

export class TenantWebhookRepository {
  constructor(private readonly db: Db) {}

  async get(tenantId: string): Promise<TenantWebhook> {
    const row = await this.db.selectFrom('tenant_settings').select('settings').where('tenant_id', '=', tenantId).executeTakeFirst();
    const s = (row?.settings ?? {}) as Record<string, unknown>;
    return {
      url: typeof s.webhook_url === 'string' && s.webhook_url ? s.webhook_url : null,
      secret: typeof s.webhook_secret === 'string' && s.webhook_secret ? s.webhook_secret : null,
      events: Array.isArray(s.webhook_events) ? s.webhook_events.filter((e): e is string => typeof e === 'string') : undefined,
    };
  }
}
