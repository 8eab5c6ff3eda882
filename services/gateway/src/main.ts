/** Composition root of the gateway: config, features, HTTP server, shutdown. No logic here. */
import { createLogger, createMetricsRegistry, pingPostgres, runService } from '@agw/shared';
import { loadGatewayConfig } from './config';
import { buildGateway } from './gateway';

const config = loadGatewayConfig();
const logger = createLogger('gateway', config.logLevel);
const registry = createMetricsRegistry('gateway');

runService({
  name: 'gateway',
  logger,
  registry,
  opsHost: config.opsHost,
  opsPort: config.opsPort,
  start: async () => {
    const gateway = await buildGateway(config, logger, registry);
    const server = await gateway.listen();
    logger.info({ url: config.publicBaseUrl, port: server.port }, 'gateway listening');
    return {
      closers: [() => gateway.close(), () => server.close()],
      checks: {
        postgres: () => pingPostgres(gateway.deps.db),
        redis: async () => void (await gateway.deps.redis.ping()),
      },
    };
  },
});
