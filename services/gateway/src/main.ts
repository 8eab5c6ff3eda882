/** Composition root of the gateway: config, features, HTTP server, shutdown. No logic here. */
import { createLogger, createMetricsRegistry, runService } from '@agw/shared';
import { sql } from 'kysely';
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
        postgres: async () => void (await sql`SELECT 1`.execute(gateway.deps.db)),
        redis: async () => void (await gateway.deps.redis.ping()),
      },
    };
  },
});
