/**
 * The settings keys a tenant may PATCH (spec: "Tenant settings"), validated strictly: unknown keys and
 * bad values are a 422 naming the key. Policy keys are handed to the policy service; the rest are
 * stored by the gateway.
 */
import { DEFAULT_APPROVAL_EXPIRY_SECONDS, MAX_REQUIRED_APPROVERS } from '@agw/shared';
import { z } from 'zod';
import { gatewayConstraintsSchema } from '../pipeline/gateway-constraints';

export const POLICY_TEMPLATES = ['general', 'financial', 'email', 'crm', 'data_access', 'custom'] as const;
export const WEBHOOK_EVENTS = ['action.allowed', 'action.denied', 'action.pending', 'action.pending_approval', 'action.expired', 'anomaly.detected', 'session.interrupted', 'tool.quarantined', 'evidence.witness_refused', 'policy.changed', 'upstream.authorization_required'] as const;
export const FAILURE_MODES = ['fail-closed', 'fail-open', 'fail_to_queue'] as const;
export const ANCHOR_CHAINS = ['polygon', 'polygon-amoy', 'local'] as const;

const httpsUrlNamed = (key: string) =>
  z
    .string()
    .max(2048)
    .refine((s) => {
      try {
        return new URL(s).protocol === 'https:';
      } catch {
        return false;
      }
    }, `${key} must be an absolute HTTPS URL (http:// is rejected)`);
const httpsUrl = httpsUrlNamed('webhook_url');

/** Where the audit records stream to as OCSF events (docs/evidence.md, "OCSF for the SIEM"). */
export const SIEM_FORMATS = ['splunk_hec', 'jsonl'] as const;
export const siemExportSchema = z
  .object({
    url: httpsUrlNamed('siem_export.url'),
    /** splunk_hec: Splunk's HTTP Event Collector (`Authorization: Splunk <token>`); jsonl: OCSF events, one per line */
    format: z.enum(SIEM_FORMATS),
    /** the collector's token (sealed by the vault, never shown again); omitted: the one saved before, if any */
    token: z.string().min(1).max(4096).optional(),
  })
  .strict();

export { DEFAULT_APPROVAL_EXPIRY_SECONDS };
export const MAX_APPROVAL_EXPIRY_SECONDS = 30 * 24 * 3600;

export const failureConfigSchema = z
  .object({
    /** what happens when the policy engine or its stores are unreachable */
    mode: z.enum(FAILURE_MODES),
  })
  .strict();

/** A public dashboard slug: lowercase letters, digits and inner hyphens, 1-64 characters. */
export const PUBLIC_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const publicSlugSchema = z.string().regex(PUBLIC_SLUG, 'slug must be 1-64 lowercase letters, digits or inner hyphens');

/** Opt-in to the public dashboard and transparency pages (docs/public-dashboard.md); off unless enabled. */
export const publicDashboardSchema = z
  .object({
    enabled: z.boolean(),
    /** the address of the page, /api/dashboard/public/{slug}; defaults to the tenant's slug */
    slug: publicSlugSchema.optional(),
  })
  .strict();

/** A human's explicit activation of a candidate whose tests fail (PATCH /dashboard/settings, POST /policy/shadow/promote). */
export const overrideFailingTestsSchema = z
  .object({ note: z.string().trim().min(1, 'note must say why the failing tests are overridden (it is recorded)').max(2000) })
  .strict()
  .meta({ description: "activate although the candidate's test_* rules fail; the note, the failing tests and who overrode them are recorded (control_plane record, policy.changed event)" });

export const settingsPatchSchema = z
  .object({
    policy_template: z.enum(POLICY_TEMPLATES).optional(),
    policy_config: z.record(z.string(), z.unknown()).optional(),
    custom_policy: z.string().max(256 * 1024).optional(),
    /**
     * activate this custom_policy although its test_* rules fail: a human's reason, recorded with the failing
     * tests and who overrode them (a control_plane record and a policy.changed event; docs/policy.md)
     */
    override_failing_tests: overrideFailingTestsSchema.optional(),
    webhook_url: httpsUrl.nullable().optional(),
    webhook_secret: z.string().min(16, 'webhook_secret must be at least 16 characters').max(256).optional(),
    webhook_events: z.array(z.enum(WEBHOOK_EVENTS)).max(16).optional(),
    /** stream every decision to a SIEM collector as OCSF events; null turns it off */
    siem_export: siemExportSchema.nullable().optional(),
    anchor_chain: z.enum(ANCHOR_CHAINS).optional(),
    failure_config: failureConfigSchema.optional(),
    rate_limit_rps: z.number().int().min(1).max(100_000).optional(),
    rate_limit_burst: z.number().int().min(1).max(1_000_000).optional(),
    gateway_constraints: gatewayConstraintsSchema.optional(),
    /** managed sessions: an observed event scoring above this (0-1) auto-interrupts the session (default 0.8) */
    session_anomaly_threshold: z.number().min(0).max(1).optional(),
    public_dashboard: publicDashboardSchema.optional(),
    /** approvals and rejections need a signed-in human (session token), not an API key (docs/auth.md) */
    approvals_require_human: z.boolean().optional(),
    /** a queued action not decided within this many seconds becomes `expired` (60 s to 30 days; default 24 h) */
    approval_expiry_seconds: z
      .number()
      .int('approval_expiry_seconds must be an integer')
      .min(60, 'approval_expiry_seconds must be at least 60')
      .max(MAX_APPROVAL_EXPIRY_SECONDS, `approval_expiry_seconds must be at most ${MAX_APPROVAL_EXPIRY_SECONDS} (30 days)`)
      .optional(),
    /** four eyes: how many distinct members must approve a queued action (1-10; default 1); a policy may ask for more (docs/auth.md, "Four-eyes approvals") */
    required_approvers: z
      .number()
      .int('required_approvers must be an integer')
      .min(1, 'required_approvers must be at least 1')
      .max(MAX_REQUIRED_APPROVERS, `required_approvers must be at most ${MAX_REQUIRED_APPROVERS}`)
      .optional(),
    /** a federated tool never seen before: auto (pinned at once unless flagged) or manual (waits for a human) */
    upstream_tool_approval: z.enum(['auto', 'manual']).optional(),
    /** rotating the tenant key (POST /api/api-keys/rotate) revokes every OAuth grant of MCP clients (default true) */
    oauth_grants_end_on_key_rotation: z.boolean().optional(),
  })
  .strict();

/** The settings as GET/PATCH /api/dashboard/settings answer them (secrets never included). */
export const settingsViewSchema = z.object({
  policy_template: z.string(),
  policy_config: z.record(z.string(), z.unknown()),
  custom_policy: z.string().nullable(),
  bundle_revision: z.string().nullable(),
  webhook_url: z.string().nullable(),
  webhook_secret_set: z.boolean(),
  webhook_events: z.array(z.string()),
  siem_export: z
    .object({ url: z.string(), format: z.enum(SIEM_FORMATS), token_set: z.boolean() })
    .nullable()
    .meta({ description: 'where decisions stream as OCSF events (docs/evidence.md, "OCSF for the SIEM"); the token is never shown' }),
  anchor_chain: z.string(),
  failure_config: z.object({ mode: z.enum(FAILURE_MODES) }),
  rate_limit_rps: z.number(),
  rate_limit_burst: z.number(),
  gateway_constraints: z.record(z.string(), z.unknown()),
  session_anomaly_threshold: z.number().nullable(),
  public_dashboard: z.object({ enabled: z.boolean(), slug: z.string().nullable() }),
  approvals_require_human: z.boolean().meta({ description: 'approvals need a signed-in human (docs/auth.md)' }),
  approval_expiry_seconds: z.number().int().meta({ description: 'a queued action not decided within this time expires' }),
  required_approvers: z.number().int().meta({ description: 'distinct members who must approve a queued action (four eyes: 2 or more; a policy may ask for more); docs/auth.md' }),
  upstream_tool_approval: z.enum(['auto', 'manual']).meta({ description: 'new tools of upstream MCP servers: pinned at once (auto) or held for a human (manual); docs/federation.md' }),
  oauth_grants_end_on_key_rotation: z.boolean().meta({ description: 'rotating the tenant key revokes every OAuth grant of MCP clients (docs/auth.md, "MCP clients: OAuth 2.1")' }),
});
export type SettingsView = z.infer<typeof settingsViewSchema>;

export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/** The gateway-owned settings as stored in tenant_settings.settings. */
export interface StoredSettings {
  webhook_url?: string | null;
  /** only in rows written before secrets were sealed (re-sealed by webhook-secret-sealing.ts) */
  webhook_secret?: string;
  /** the webhook signing secret sealed by the vault (SealSecret) */
  webhook_secret_sealed?: string;
  webhook_events?: string[];
  siem_export?: { url: string; format: (typeof SIEM_FORMATS)[number] };
  /** the SIEM collector's token sealed by the vault (purpose siem_token) */
  siem_token_sealed?: string;
  anchor_chain?: string;
  failure_config?: { mode: (typeof FAILURE_MODES)[number] };
  rate_limit_rps?: number;
  rate_limit_burst?: number;
  gateway_constraints?: Record<string, unknown>;
  session_anomaly_threshold?: number;
  public_dashboard?: { enabled: boolean; slug: string };
  approvals_require_human?: boolean;
  approval_expiry_seconds?: number;
  required_approvers?: number;
  upstream_tool_approval?: 'auto' | 'manual';
  oauth_grants_end_on_key_rotation?: boolean;
}

/** When an action queued at `queuedAt` under these settings expires. */
export function approvalExpiryOf(settings: StoredSettings, queuedAt: Date): Date {
  return new Date(queuedAt.getTime() + (settings.approval_expiry_seconds ?? DEFAULT_APPROVAL_EXPIRY_SECONDS) * 1000);
}

/** The settings a tenant created from now on starts with (existing tenants keep the spec's behaviour). */
export const NEW_TENANT_SETTINGS: StoredSettings = { approvals_require_human: true };

export const DEFAULT_WEBHOOK_EVENTS = ['action.allowed', 'action.denied', 'action.pending'];
export const DEFAULT_FAILURE_CONFIG = { mode: 'fail-closed' } as const;
