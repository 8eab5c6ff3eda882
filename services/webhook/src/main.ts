/** Composition root of the webhook service: the service is assembled by webhook-service.ts (its tests start it in-process too). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { runService } from '@agw/shared';
import { loadWebhookConfig } from './config';
import { startWebhookService } from './webhook-service';

runService({
  name: 'webhook',
  loadConfig: loadWebhookConfig,
  start: async ({ config, logger, registry }) => {
    const service = await startWebhookService(config, logger, registry);
    return { closers: service.closers, checks: service.checks, info: { grpcPort: service.grpcPort } };
  },
});
