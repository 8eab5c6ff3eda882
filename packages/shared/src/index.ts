/**
 * @module @agw/shared
 * What every service of the fleet needs: configuration, logging, metrics, the error taxonomy, the
 * database, Redis, the NATS bus and its event contracts, gRPC plumbing, the ops server and the service
 * runner.
 *
 * @example
 * ```ts
 * const config = loadConfig({ ...commonSettings, ...storeSettings, port: setting('X_PORT', envInt(7000), 'port') });
 * const logger = createLogger('x', config.logLevel);
 * ```
 */
export * from './config';
export * from './logger';
export * from './metrics';
export * from './store-requests';
export * from './peer-calls';
export * from './errors';
export * from './json-text';
export * from './sealed-values';
export * from './canonical';
export * from './glob';
export * from './mcp-tool';
export * from './mcp-log-levels';
export * from './mcp-round';
export * from './approvals/approval-patterns';
export * from './approvals/approval.repository';
export * from './action-record';
export * from './record-schema';
export * from './record-builders';
export * from './decision-input';
export * from './webhook-settings';
export * from './tenants/tenant-settings.read-model';
export * from './redis';
export * from './grpc';
export * from './grpc-retry';
export * from './peer-clients';
export * from './ops-server';
export * from './service';
export * from './bus/events';
export * from './bus/bus';
export * from './bus/batch-consumer';
export * from './bus/batch-publisher';
export * from './bus/event-outbox.repository';
export * from './bus/event-publisher';
export * from './bus/tenant-changes';
export * from './bus/record-requests';
export * from './bus/sample-events';
export * from './db/database';
export * from './db/copy-rows';
export * from './db/migrate';
export * from './db/backup';
export * from './db/functions';
export * from './stores';
export * from './tracing/hooks';
export * from './free-port';
export * from './self-signed-cert';
export * from './test-stores';
