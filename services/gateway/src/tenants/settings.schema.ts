/**
 * The settings keys a tenant may PATCH (spec: "Tenant settings"), validated strictly: unknown keys and
 * bad values are a 422 naming the key. Policy keys are handed to the policy service; the rest are
 * stored by the gateway.
 */
import { z } from 'zod';
import { gatewayConstraintsSchema } from '../pipeline/gateway-constraints';

export const POLICY_TEMPLATES = ['general', 'financial', 'email', 'crm', 'data_access', 'custom'] as const;
export const WEBHOOK_EVENTS = ['action.allowed', 'action.denied', 'action.pending', 'action.pending_approval', 'anomaly.detected', 'session.interrupted'] as const;
export const FAILURE_MODES = ['fail-closed', 'fail-open', 'fail_to_queue'] as const;
export const ANCHOR_CHAINS = ['polygon', 'polygon-amoy', 'local'] as const;

const httpsUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      return new URL(s).protocol === 'https:';
    } catch {
      return false;
    }
  }, 'webhook_url must be an absolute HTTPS URL (http:// is rejected)');

export const failureConfigSchema = z
  .object({
    /** what happens when the policy engine or its stores are unreachable */
    mode: z.enum(FAILURE_MODES),
  })
  .strict();

export const settingsPatchSchema = z
  .object({
    policy_template: z.enum(POLICY_TEMPLATES).optional(),
    policy_config: z.record(z.string(), z.unknown()).optional(),
    custom_policy: z.string().max(256 * 1024).optional(),
    webhook_url: httpsUrl.nullable().optional(),
    webhook_secret: z.string().min(16, 'webhook_secret must be at least 16 characters').max(256).optional(),
    webhook_events: z.array(z.enum(WEBHOOK_EVENTS)).max(16).optional(),
    anchor_chain: z.enum(ANCHOR_CHAINS).optional(),
    failure_config: failureConfigSchema.optional(),
    rate_limit_rps: z.number().int().min(1).max(100_000).optional(),
    rate_limit_burst: z.number().int().min(1).max(1_000_000).optional(),
    gateway_constraints: gatewayConstraintsSchema.optional(),
    /** managed sessions: an observed event scoring above this (0-1) auto-interrupts the session (default 0.8) */
    session_anomaly_threshold: z.number().min(0).max(1).optional(),
  })
  .strict();

export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/** The gateway-owned settings as stored in tenant_settings.settings. */
export interface StoredSettings {
  webhook_url?: string | null;
  webhook_secret?: string;
  webhook_events?: string[];
  anchor_chain?: string;
  failure_config?: { mode: (typeof FAILURE_MODES)[number] };
  rate_limit_rps?: number;
  rate_limit_burst?: number;
  gateway_constraints?: Record<string, unknown>;
  session_anomaly_threshold?: number;
}

export const DEFAULT_WEBHOOK_EVENTS = ['action.allowed', 'action.denied', 'action.pending'];
export const DEFAULT_FAILURE_CONFIG = { mode: 'fail-closed' } as const;
