/**
 * Composition root of the managed-session service. Managed agent configs, sessions on the external agent
 * platform and the SSE event consumer come with their own issue; until then the service runs in the fleet
 * with its stores connected, so its health, readiness and metrics are real and deployment is in place.
 */
import { connectBus, createDb, createLogger, createMetricsRegistry, pingNats, pingPostgres, runService } from '@agw/shared';
import { loadManagedConfig } from './config';

const config = loadManagedConfig();
const logger = createLogger('managed', config.logLevel);
const registry = createMetricsRegistry('managed');

runService({
  name: 'managed',
  logger,
  registry,
  opsHost: config.opsHost,
  opsPort: config.opsPort,
  start: async () => {
    const db = createDb(config.databaseUrl, { max: 2 });
    await pingPostgres(db);
    const bus = await connectBus(config.natsUrl, config.streamPrefix, 'managed');
    return {
      closers: [() => db.destroy(), () => bus.close()],
      checks: {
        postgres: () => pingPostgres(db),
        nats: () => pingNats(bus),
      },
    };
  },
});
