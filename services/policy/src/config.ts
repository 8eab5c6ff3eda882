/** Policy service settings (env validated once at start). */
import path from 'node:path';
import { TENANT_CACHE_MS, envInt, grpcServiceSettings, internalCidrsSetting, loadConfig, peerSettings, setting } from '@agw/shared';
import { z } from 'zod';

export const policySettings = {
  ...grpcServiceSettings('policy'),
  templatesDir: setting(
    'POLICY_TEMPLATES_DIR',
    z.string().default(path.resolve(__dirname, '..', 'templates')),
    'folder of the template Rego modules (general.rego, financial.rego, email.rego, crm.rego, data_access.rego)',
  ),
  policyCacheMs: setting('POLICY_CACHE_MS', envInt(TENANT_CACHE_MS), 'how long a replica caches a tenant policy at most; a change reaches every replica at once over NATS, this bounds a lost message'),
  ...peerSettings('vault', { address: 'vault service gRPC address (RevealParams for replay of actions with PII)', deadlineMs: 5000, deadline: 'deadline of one vault call (revealing params for replay)' }),
  ...peerSettings('audit', { address: 'audit service gRPC address (the decisions\' replay inputs, for replay)', deadlineMs: 5000, deadline: 'deadline of one audit call (reading replay inputs, recording policy changes)' }),
  shadowQueueMax: setting('POLICY_SHADOW_QUEUE_MAX', envInt(10_000), 'governed calls waiting for a shadow candidate\'s decision at most (docs/policy.md, "Shadow rollout"); beyond it a call is not shadowed and is counted as dropped, never waited for'),
  shadowBatch: setting('POLICY_SHADOW_BATCH', envInt(256), 'calls a shadow candidate decides per batch in its evaluation thread, kept in one transaction'),
  bundleAllowCidrs: internalCidrsSetting('POLICY_BUNDLE_ALLOW_CIDRS', 'bundle server addresses'),
  bundleCaFile: setting('POLICY_BUNDLE_CA_FILE', z.string().optional(), 'PEM file of extra CA certificates trusted for bundle servers (re-read when it changes)'),
  bundlePollMs: setting('POLICY_BUNDLE_POLL_MS', envInt(60_000), 'how often a tenant\'s OPA bundle source is polled (with its ETag)'),
  bundleMaxBytes: setting('POLICY_BUNDLE_MAX_BYTES', envInt(8 * 1024 * 1024), 'the largest OPA bundle accepted, compressed and uncompressed, bytes'),
  bundleTimeoutMs: setting('POLICY_BUNDLE_TIMEOUT_MS', envInt(10_000), 'limit of connecting to a bundle server and of its answer\'s headers, ms'),
  shadowFlushMs: setting('POLICY_SHADOW_FLUSH_MS', envInt(200), 'how long a shadowed call waits for others to fill its batch at most, ms (the report lags by as much)'),
};

export type PolicyConfig = ReturnType<typeof loadPolicyConfig>;
export const loadPolicyConfig = (env?: Record<string, string | undefined>) => loadConfig(policySettings, env);
