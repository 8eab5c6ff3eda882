/** Composition root of the webhook service: config, logger, metrics, then run. No logic here. */
import { createLogger, createMetricsRegistry, runService } from '@agw/shared';
import { loadWebhookConfig } from './config';
import { startWebhookService } from './webhook-service';

const config = loadWebhookConfig();
const logger = createLogger('webhook', config.logLevel);
const registry = createMetricsRegistry('webhook');

runService({
  name: 'webhook',
  logger,
  registry,
  opsHost: config.opsHost,
  opsPort: config.opsPort,
  start: () => startWebhookService(config, logger, registry),
});
