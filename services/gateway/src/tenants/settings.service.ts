/**
 * GET/PATCH of a tenant's settings. Policy keys (policy_template, policy_config, custom_policy) are owned
 * by the policy service, which compiles them first (a policy that does not compile is a 422 and the old
 * one stays in force); the other keys are stored here. A webhook secret is generated when a webhook URL
 * is set without one, and returned only in the PATCH response that saved webhook settings. It is stored
 * sealed by the vault (`webhook_secret_sealed`, docs/webhooks.md "Secret at rest"), never in clear.
 */
import { randomBytes } from 'node:crypto';
import { ConflictError, type Conn, ForbiddenError, InputError, type Json, TENANT_CACHE_MS, TenantCache, isDependencyDown, jsonField, jsonOf, objectFromAnswerJson, openSecretRequest, sealedSecretText, webhookUrlOf } from '@agw/shared';
import type { PolicyClient, VaultClient } from '../clients/grpc-clients';
import type { RateLimit } from '../pipeline/rate-limiter';
import { DEFAULT_APPROVAL_EXPIRY_SECONDS, DEFAULT_FAILURE_CONFIG, DEFAULT_WEBHOOK_EVENTS, type SettingsPatch, type SettingsView, type StoredSettings } from './settings.schema';
import type { SettingsRepository } from './settings.repository';

/**
 * Who is changing the settings, as far as the human-only gates care: `human` for a signed-in user's
 * session (not one made from an API key), and how the refusal names any other caller.
 */
export interface SettingsChanger {
  human: boolean;
  /** e.g. "an API key", "a session token made from an API key" */
  caller: string;
  /** who it is, as records name them (member e-mail, api_key:<tenant>): recorded with a policy override */
  actor?: string;
}

/**
 * Settings whose switching off undoes a defence, so only a signed-in human may do it (docs/auth.md,
 * "Approvals" and "MCP clients: OAuth 2.1"): `approvals_require_human` (a human decides approvals) and
 * `oauth_grants_end_on_key_rotation` (rotating the key ends every MCP client's grant; on by default).
 * Turning them on, or sending the value in force, is open to the tenant key.
 */
const HUMAN_ONLY_OFF = [
  { key: 'approvals_require_human', byDefault: false },
  { key: 'oauth_grants_end_on_key_rotation', byDefault: true },
] as const;

/** The human-only settings this patch switches off (compared with `stored` when given). */
function switchedOff(patch: SettingsPatch, stored?: Record<string, unknown>): string[] {
  return HUMAN_ONLY_OFF.filter(({ key, byDefault }) => (patch as Record<string, unknown>)[key] === false && (!stored || (stored[key] ?? byDefault) === true)).map((g) => g.key);
}

function checkHumanGate(stored: Record<string, unknown>, patch: SettingsPatch, by: SettingsChanger): void {
  if (by.human) return;
  // four eyes: fewer required approvers undoes a defence as well (docs/auth.md, "Four-eyes approvals")
  const current = typeof stored.required_approvers === 'number' ? stored.required_approvers : 1;
  if (patch.required_approvers !== undefined && patch.required_approvers < current) {
    throw new ForbiddenError(
      `Lowering required_approvers (from ${current} to ${patch.required_approvers}) needs a signed-in human: sign in (POST /api/auth/login) and send the session token; ${by.caller} cannot (raising it is open to the tenant's API key)`,
    );
  }
  const off = switchedOff(patch, stored);
  if (!off.length) return;
  throw new ForbiddenError(
    `Turning ${off.join(' and ')} off needs a signed-in human: sign in (POST /api/auth/login) and send the session token; ${by.caller} cannot (turning it on is open to the tenant's API key)`,
  );
}

/** What a sealed tenant secret is for (the vault binds the purpose to the ciphertext). */
export type SecretPurpose = 'webhook_secret' | 'siem_token';

export interface WebhookSecretSealer {
  seal(tenantId: string, plaintext: string, purpose?: SecretPurpose): Promise<string>;
  open(tenantId: string, sealedJson: string, purpose?: SecretPurpose): Promise<string>;
}

const noSealer: WebhookSecretSealer = {
  seal: () => Promise.reject(new Error('no webhook secret sealer configured')),
  open: () => Promise.reject(new Error('no webhook secret sealer configured')),
};

/** The vault's SealSecret/OpenSecret for webhook secrets. */
export function vaultWebhookSecretSealer(vault: Pick<VaultClient, 'sealSecret' | 'openSecret'>): WebhookSecretSealer {
  return {
    seal: async (tenantId, plaintext, purpose = 'webhook_secret') => sealedSecretText(await vault.sealSecret({ tenant_id: tenantId, purpose, plaintext })),
    open: async (tenantId, sealedJson, purpose = 'webhook_secret') => (await vault.openSecret(openSecretRequest(tenantId, purpose, sealedJson))).plaintext,
  };
}

export class SettingsService {
  constructor(
    private readonly repo: SettingsRepository,
    private readonly policy: PolicyClient,
    private readonly defaults: { rps: number; burst: number },
    /** Refuses (422) a webhook URL whose host resolves to a private, loopback or link-local address. */
    private readonly checkWebhookUrl: (url: string) => Promise<void> = async () => undefined,
    /** Told after a change is saved (the gateway publishes it on NATS: the webhook service caches webhook settings). */
    private readonly onSaved: (tenantId: string) => void = () => undefined,
    /** Seals a webhook secret for storage and opens it back (the vault's SealSecret/OpenSecret: the tenant's HSM-held credentials key). */
    private readonly secrets: WebhookSecretSealer = noSealer,
    /** Tells the vault the tenant's upstream_tool_approval (docs/federation.md). */
    private readonly setToolApproval?: (tenantId: string, mode: 'auto' | 'manual') => Promise<void>,
  ) {}

  /**
   * A short in-process cache: settings are read on every request, changed rarely. A change drops the entry
   * here and, through the change message (`invalidate`, wired in gateway.ts), on every other replica as soon
   * as it arrives; TENANT_CACHE_MS bounds it when a message is lost.
   */
  private readonly cache = new TenantCache<StoredSettings & Record<string, unknown>>(TENANT_CACHE_MS);

  /** `conn`: read (on a miss) through a caller's transaction, never a second pooled connection. */
  stored(tenantId: string, conn?: Conn): Promise<StoredSettings & Record<string, unknown>> {
    return this.cache.get(tenantId, '', () => this.repo.get(tenantId, conn));
  }

  /** Drop a tenant's cached settings (a change saved by any replica), or all of them (undefined). */
  invalidate(tenantId: string | undefined): void {
    this.cache.invalidate(tenantId);
  }

  /**
   * Whether the tenant has a webhook URL, as the webhook service reads it (`webhookUrlOf`): a decision
   * recorded without one goes under `nohook.decisions.`, which the webhook service never receives. When the
   * settings cannot be read, true (the webhook service decides, as before). A URL saved here applies to the
   * next call on this replica, and on the others once the change message arrives, as it does in the webhook
   * service's own settings cache. `conn`: a caller holding a transaction reads through it (the approval
   * expiry records inside its sweep's transaction: a read from the pool there could wait for a connection
   * that every concurrent sweep holds).
   */
  async hasWebhook(tenantId: string, conn?: Conn): Promise<boolean> {
    const s = await this.stored(tenantId, conn).catch(() => null);
    return s === null || webhookUrlOf(s) !== null;
  }

  async rateLimit(tenantId: string): Promise<RateLimit> {
    const s = await this.stored(tenantId);
    return { rps: s.rate_limit_rps ?? this.defaults.rps, burst: s.rate_limit_burst ?? this.defaults.burst };
  }

  /** The settings as the dashboard shows them (secrets never included). */
  async view(tenantId: string): Promise<SettingsView> {
    const [s, policy] = await Promise.all([this.repo.get(tenantId), this.policy.getTenantPolicy({ tenant_id: tenantId })]);
    return this.present(s, policy);
  }

  /** `by`: who asks (the human-only gates); a caller that does not say is not a human. */
  async update(tenantId: string, patch: SettingsPatch, by: SettingsChanger = { human: false, caller: 'this caller' }): Promise<SettingsView & { webhook_secret?: string }> {
    // refused before anything is applied (policy, tool approval, webhook check), and again under the row's lock below
    if (!by.human && (switchedOff(patch).length || patch.required_approvers !== undefined)) checkHumanGate(await this.repo.get(tenantId), patch, by);
    const { policy_template, policy_config, custom_policy, override_failing_tests, webhook_secret, public_dashboard, siem_export, ...rest } = patch;
    if (override_failing_tests && !custom_policy) throw InputError.at(['body', 'override_failing_tests'], 'override_failing_tests goes with the custom_policy whose failing tests it overrides', 'missing');
    // Checked before anything is saved. The webhook service re-checks at every delivery (the address a
    // name resolves to can change), so when it cannot be asked now the URL is still accepted.
    for (const url of [patch.webhook_url, siem_export?.url]) {
      if (typeof url !== 'string') continue;
      await this.checkWebhookUrl(url).catch((e: unknown) => {
        if (!isDependencyDown(e)) throw e;
      });
    }
    // the vault applies it to tools seen from now on (also on a list_changed it handles by itself)
    if (patch.upstream_tool_approval !== undefined) await this.setToolApproval?.(tenantId, patch.upstream_tool_approval);
    let policy;
    if (policy_template !== undefined || policy_config !== undefined || custom_policy !== undefined) {
      policy = await this.policy.setTenantPolicy({
        tenant_id: tenantId,
        policy_template: policy_template ?? '',
        ...jsonField('policy_config', policy_config),
        has_policy_config: policy_config !== undefined,
        custom_policy: custom_policy ?? '',
        has_custom_policy: custom_policy !== undefined,
        actor: by.actor ?? '',
        override_failing_tests: override_failing_tests,
      });
    }
    const current = await this.repo.get(tenantId);
    const toStore: Record<string, unknown> = { ...rest };
    if (public_dashboard) {
      // the slug is kept while disabled; enabling without one uses the last one, else the tenant's slug
      const prev = current.public_dashboard as StoredSettings['public_dashboard'];
      const slug = public_dashboard.slug ?? prev?.slug ?? (await this.repo.tenantSlug(tenantId));
      toStore.public_dashboard = { enabled: public_dashboard.enabled, slug };
    }
    if (siem_export === null) Object.assign(toStore, { siem_export: undefined, siem_token_sealed: undefined });
    else if (siem_export) {
      toStore.siem_export = { url: siem_export.url, format: siem_export.format };
      if (siem_export.token !== undefined) toStore.siem_token_sealed = await this.secrets.seal(tenantId, siem_export.token, 'siem_token');
    }
    const webhookTouched = patch.webhook_url !== undefined || webhook_secret !== undefined || patch.webhook_events !== undefined;
    let secret: string | undefined;
    if (webhook_secret !== undefined) secret = webhook_secret;
    else if (patch.webhook_url && !hasWebhookSecret(current)) secret = `whsec_${randomBytes(24).toString('base64url')}`;
    if (secret) {
      toStore.webhook_secret_sealed = await this.secrets.seal(tenantId, secret);
      toStore.webhook_secret = undefined; // a clear value of before sealing goes
    }
    const saved = Object.keys(toStore).length
      ? await this.repo.merge(tenantId, toStore, (stored) => checkHumanGate(stored, patch, by)).catch((e: unknown) => {
          // the unique index on the slug of enabled public dashboards
          if ((e as { code?: string }).code === '23505') throw new ConflictError('public_dashboard.slug is taken by another tenant: choose another slug');
          throw e;
        })
      : current;
    this.cache.invalidate(tenantId);
    if (saved !== current) this.onSaved(tenantId);
    const view: SettingsView & { webhook_secret?: string } = this.present(saved, policy ?? (await this.policy.getTenantPolicy({ tenant_id: tenantId })));
    // the spec: the signing secret is in the answer whenever webhook settings are saved
    if (webhookTouched) {
      const stored = saved as StoredSettings;
      // the change is saved: a vault that cannot open the secret for the answer only leaves it out
      const opened = stored.webhook_secret_sealed
        ? await this.secrets.open(tenantId, stored.webhook_secret_sealed).catch((e: unknown) => {
            if (isDependencyDown(e)) return undefined;
            throw e;
          })
        : stored.webhook_secret;
      const shown = secret ?? opened;
      if (shown) view.webhook_secret = shown;
    }
    return view;
  }

  private present(s: StoredSettings, policy: { policy_template: string; policy_config: Json | undefined; policy_config_json: string; custom_policy: string; bundle?: { revision: string } }): SettingsView {
    return {
      policy_template: policy.policy_template || 'general',
      policy_config: objectFromAnswerJson(jsonOf(policy, 'policy_config'), 'policy_config'),
      custom_policy: policy.custom_policy || null,
      bundle_revision: policy.bundle?.revision ?? null,
      webhook_url: s.webhook_url ?? null,
      webhook_secret_set: hasWebhookSecret(s),
      webhook_events: s.webhook_events ?? DEFAULT_WEBHOOK_EVENTS,
      siem_export: s.siem_export ? { url: s.siem_export.url, format: s.siem_export.format, token_set: Boolean(s.siem_token_sealed) } : null,
      anchor_chain: s.anchor_chain ?? 'polygon',
      failure_config: s.failure_config ?? DEFAULT_FAILURE_CONFIG,
      rate_limit_rps: s.rate_limit_rps ?? this.defaults.rps,
      rate_limit_burst: s.rate_limit_burst ?? this.defaults.burst,
      gateway_constraints: s.gateway_constraints ?? {},
      // null: the managed service's default (SESSION_ANOMALY_THRESHOLD, 0.8)
      session_anomaly_threshold: s.session_anomaly_threshold ?? null,
      public_dashboard: { enabled: s.public_dashboard?.enabled === true, slug: s.public_dashboard?.slug ?? null },
      // absent: a tenant created before the setting existed (the spec's behaviour: any authenticated caller decides)
      approvals_require_human: s.approvals_require_human ?? false,
      approval_expiry_seconds: s.approval_expiry_seconds ?? DEFAULT_APPROVAL_EXPIRY_SECONDS,
      required_approvers: s.required_approvers ?? 1,
      upstream_tool_approval: s.upstream_tool_approval ?? 'auto',
      oauth_grants_end_on_key_rotation: s.oauth_grants_end_on_key_rotation ?? true,
    };
  }
}

function hasWebhookSecret(s: StoredSettings): boolean {
  return Boolean(s.webhook_secret_sealed || s.webhook_secret);
}
