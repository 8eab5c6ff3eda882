/** Composition root of the gateway: the HTTP edge assembled by gateway.ts (integration tests build it in-process too). */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { pingPostgres, runService } from '@agw/shared';
import { loadGatewayConfig } from './config';
import { buildGateway } from './gateway';

runService({
  name: 'gateway',
  loadConfig: loadGatewayConfig,
  start: async ({ config, logger, registry }) => {
    const gateway = await buildGateway(config, logger, registry);
    const server = await gateway.listen();
    return {
      // closed in reverse: the HTTP server stops taking requests first, then the gateway's clients and stores
      closers: [() => gateway.close(), () => server.close()],
      checks: {
        postgres: () => pingPostgres(gateway.deps.db),
        redis: async () => void (await gateway.deps.redis.ping()),
      },
      info: { url: config.publicBaseUrl, port: server.port },
    };
  },
});
