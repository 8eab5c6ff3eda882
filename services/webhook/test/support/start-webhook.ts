/**
 * The webhook service's own definition (webhook.service.ts, as main.ts runs it) started in this process against
 * the real Postgres and NATS on a free gRPC port, with the tests' environment (support/harness.ts `testEnv`: the
 * stream prefix, loopback targets allowed, the CA file of the run's receiver certificate) and `env` on top.
 * Tests name what they put in place (`overrides`: the target guard's DNS look-up).
 */
import { type StartedService, type TestServiceOptions, startTestService } from '@agw/shared';
import type { WebhookConfig } from '../../src/config';
import { type WebhookApi, type WebhookOverrides, webhookService } from '../../src/webhook.service';
import { testEnv } from './harness';

export type StartedWebhook = StartedService<WebhookConfig, WebhookApi>;

export function startWebhook(prefix: string, caFile: string, o: TestServiceOptions<WebhookConfig, WebhookOverrides> = {}): Promise<StartedWebhook> {
  return startTestService(webhookService(), { ...o, prefix, env: testEnv(prefix, caFile, o.env) });
}
