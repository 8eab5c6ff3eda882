/**
 * The plaintext of a tenant's webhook signing secret, for signing one attempt. The gateway stores it
 * sealed by the vault (`webhook_secret_sealed` in tenant_settings: the tenant's HSM-held credentials key,
 * docs/webhooks.md "Secret at rest"); it is opened through the vault's OpenSecret RPC and kept in memory for
 * OPENED_SECRET_CACHE_MS, keyed by the sealed value itself, so a changed secret (a new sealed value) is
 * never signed with the old one. A row written before sealing (`webhook_secret` in clear, until the
 * gateway's start-up sweep re-seals it) is used as it is. Never logged.
 */
import type { TenantWebhook } from './tenant-webhook.repository';

export const OPENED_SECRET_CACHE_MS = 60_000;

export type OpenSecret = (tenantId: string, sealedJson: string) => Promise<string>;

export class WebhookSecrets {
  private readonly opened = new Map<string, { at: number; value: Promise<string> }>();

  constructor(private readonly open: OpenSecret) {}

  /** null when the tenant has no secret; throws what the vault threw (e.g. unreachable) otherwise. */
  async of(tenantId: string, t: Pick<TenantWebhook, 'secret' | 'sealedSecret'>): Promise<string | null> {
    if (t.sealedSecret) {
      const key = `${tenantId}\n${t.sealedSecret}`;
      const hit = this.opened.get(key);
      if (hit && Date.now() - hit.at < OPENED_SECRET_CACHE_MS) return hit.value;
      const value = this.open(tenantId, t.sealedSecret);
      value.catch(() => this.opened.delete(key));
      if (this.opened.size >= 10_000) this.opened.clear();
      this.opened.set(key, { at: Date.now(), value });
      return value;
    }
    return t.secret;
  }
}
