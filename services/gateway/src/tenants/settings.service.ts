/**
 * GET/PATCH of a tenant's settings. Policy keys (policy_template, policy_config, custom_policy) are owned
 * by the policy service, which compiles them first (a policy that does not compile is a 422 and the old
 * one stays in force); the other keys are stored here. A webhook secret is generated when a webhook URL
 * is set without one, and returned only in the PATCH response that saved webhook settings.
 */
import { randomBytes } from 'node:crypto';
import { isDependencyDown } from '@agw/shared';
import type { PolicyClient } from '../clients/grpc-clients';
import type { RateLimit } from '../pipeline/rate-limiter';
import { DEFAULT_FAILURE_CONFIG, DEFAULT_WEBHOOK_EVENTS, type SettingsPatch, type StoredSettings } from './settings.schema';
import type { SettingsRepository } from './settings.repository';

export class SettingsService {
  constructor(
    private readonly repo: SettingsRepository,
    private readonly policy: PolicyClient,
    private readonly defaults: { rps: number; burst: number },
    /** Refuses (422) a webhook URL whose host resolves to a private, loopback or link-local address. */
    private readonly checkWebhookUrl: (url: string) => Promise<void> = async () => undefined,
    /** Told after a change is saved (the gateway publishes it on NATS: the webhook service caches webhook settings). */
    private readonly onSaved: (tenantId: string) => void = () => undefined,
  ) {}

  /** A short in-process cache: settings are read on every request, changed rarely (other replicas see a change within CACHE_MS). */
  private readonly cache = new Map<string, { at: number; value: Promise<StoredSettings & Record<string, unknown>> }>();
  private static readonly CACHE_MS = 2000;

  stored(tenantId: string): Promise<StoredSettings & Record<string, unknown>> {
    const hit = this.cache.get(tenantId);
    if (hit && Date.now() - hit.at < SettingsService.CACHE_MS) return hit.value;
    const value = this.repo.get(tenantId);
    value.catch(() => this.cache.delete(tenantId));
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(tenantId, { at: Date.now(), value });
    return value;
  }

  async rateLimit(tenantId: string): Promise<RateLimit> {
    const s = await this.stored(tenantId);
    return { rps: s.rate_limit_rps ?? this.defaults.rps, burst: s.rate_limit_burst ?? this.defaults.burst };
  }

  /** The settings as the dashboard shows them (secrets never included). */
  async view(tenantId: string): Promise<Record<string, unknown>> {
    const [s, policy] = await Promise.all([this.repo.get(tenantId), this.policy.getTenantPolicy({ tenantId })]);
    return this.present(s, policy);
  }

  async update(tenantId: string, patch: SettingsPatch): Promise<Record<string, unknown>> {
    const { policy_template, policy_config, custom_policy, webhook_secret, ...rest } = patch;
    if (typeof patch.webhook_url === 'string') {
      // Checked before anything is saved. The webhook service re-checks at every delivery (the address a
      // name resolves to can change), so when it cannot be asked now the URL is still accepted.
      await this.checkWebhookUrl(patch.webhook_url).catch((e: unknown) => {
        if (!isDependencyDown(e)) throw e;
      });
    }
    let policy;
    if (policy_template !== undefined || policy_config !== undefined || custom_policy !== undefined) {
      policy = await this.policy.setTenantPolicy({
        tenantId,
        policyTemplate: policy_template ?? '',
        policyConfigJson: policy_config !== undefined ? JSON.stringify(policy_config) : '',
        hasPolicyConfig: policy_config !== undefined,
        customPolicy: custom_policy ?? '',
        hasCustomPolicy: custom_policy !== undefined,
      });
    }
    const current = await this.repo.get(tenantId);
    const toStore: Record<string, unknown> = { ...rest };
    const webhookTouched = patch.webhook_url !== undefined || webhook_secret !== undefined || patch.webhook_events !== undefined;
    let secret: string | undefined;
    if (webhook_secret !== undefined) secret = webhook_secret;
    else if (patch.webhook_url && !current.webhook_secret) secret = `whsec_${randomBytes(24).toString('base64url')}`;
    if (secret) toStore.webhook_secret = secret;
    const saved = Object.keys(toStore).length ? await this.repo.merge(tenantId, toStore) : current;
    this.cache.delete(tenantId);
    if (saved !== current) this.onSaved(tenantId);
    const view = this.present(saved, policy ?? (await this.policy.getTenantPolicy({ tenantId })));
    if (webhookTouched && saved.webhook_secret) view.webhook_secret = saved.webhook_secret;
    return view;
  }

  private present(s: StoredSettings, policy: { policyTemplate: string; policyConfigJson: string; customPolicy: string; bundle?: { revision: string } }): Record<string, unknown> {
    return {
      policy_template: policy.policyTemplate || 'general',
      policy_config: policy.policyConfigJson ? JSON.parse(policy.policyConfigJson) : {},
      custom_policy: policy.customPolicy || null,
      bundle_revision: policy.bundle?.revision ?? null,
      webhook_url: s.webhook_url ?? null,
      webhook_secret_set: Boolean(s.webhook_secret),
      webhook_events: s.webhook_events ?? DEFAULT_WEBHOOK_EVENTS,
      anchor_chain: s.anchor_chain ?? 'polygon',
      failure_config: s.failure_config ?? DEFAULT_FAILURE_CONFIG,
      rate_limit_rps: s.rate_limit_rps ?? this.defaults.rps,
      rate_limit_burst: s.rate_limit_burst ?? this.defaults.burst,
      gateway_constraints: s.gateway_constraints ?? {},
      // null: the managed service's default (SESSION_ANOMALY_THRESHOLD, 0.8)
      session_anomaly_threshold: s.session_anomaly_threshold ?? null,
    };
  }
}
