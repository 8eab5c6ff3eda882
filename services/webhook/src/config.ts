/** Webhook service settings (env validated once at start; defaults work on a developer machine). */
import { envInt, grpcServiceSettings, internalCidrsSetting, loadConfig, peerSettings, setting } from '@agw/shared';
import { z } from 'zod';

export const webhookSettings = {
  ...grpcServiceSettings('webhook'),
  allowCidrs: internalCidrsSetting('WEBHOOK_ALLOW_CIDRS', 'target addresses'),
  ...peerSettings('vault', { address: 'vault service gRPC address (opens the sealed webhook signing secrets)', deadlineMs: 5_000, deadline: 'deadline of one vault call (opening a webhook secret)' }),
  caFile: setting('WEBHOOK_CA_FILE', z.string().optional(), 'PEM file of extra CA certificates trusted for webhook targets (re-read when it changes)'),
  timeoutMs: setting('WEBHOOK_TIMEOUT_MS', envInt(10_000), 'limit of one attempt, from DNS lookup to the end of the response'),
  connectTimeoutMs: setting('WEBHOOK_CONNECT_TIMEOUT_MS', envInt(5_000), 'limit of DNS lookup + TCP/TLS connect of one attempt'),
  concurrency: setting('WEBHOOK_CONCURRENCY', envInt(32), 'attempts in flight per replica'),
  perTenantConcurrency: setting('WEBHOOK_PER_TENANT_CONCURRENCY', envInt(4), 'attempts in flight per replica for one tenant'),
  retentionDays: setting('WEBHOOK_RETENTION_DAYS', envInt(30), 'days a delivered or failed delivery stays in the delivery log'),
  pollMs: setting('WEBHOOK_POLL_MS', envInt(500), 'how often a replica looks for due deliveries (new events and own retries wake it at once)'),
  siemBatchMax: setting('SIEM_BATCH_MAX', envInt(500), 'SIEM export: most decision events in one batch (one request per tenant per batch)'),
  siemLingerMs: setting('SIEM_LINGER_MS', envInt(1_000), 'SIEM export: how long a batch waits for more events after its first'),
  siemMaxRetryDelayMs: setting('SIEM_MAX_RETRY_DELAY_MS', envInt(60_000), 'SIEM export: the longest wait before events a collector did not take are sent again (the wait doubles from 1 s)'),
};

export type WebhookConfig = ReturnType<typeof loadWebhookConfig>;
export const loadWebhookConfig = (env?: Record<string, string | undefined>) => loadConfig(webhookSettings, env);
