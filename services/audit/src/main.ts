/** Composition root of the audit service: config, stores, gRPC server, shutdown. No logic here. */
import { createDb, createLogger, createMetricsRegistry, runService, startGrpcServer } from '@agw/shared';
import { sql } from 'kysely';
import { AuditRecordRepository } from './chain/audit-record.repository';
import { AuditChain } from './chain/audit-chain';
import { loadAuditConfig } from './config';
import { auditGrpcService } from './grpc/audit.grpc';

const config = loadAuditConfig();
const logger = createLogger('audit', config.logLevel);
const registry = createMetricsRegistry('audit');

runService({
  name: 'audit',
  logger,
  registry,
  opsHost: config.opsHost,
  opsPort: config.opsPort,
  start: async () => {
    const db = createDb(config.databaseUrl);
    await sql`SELECT 1`.execute(db);
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: config.tamperDemo });
    const grpc = await startGrpcServer(config.grpcHost, config.grpcPort, [auditGrpcService(chain, logger)]);
    logger.info({ port: grpc.port }, 'audit gRPC listening');
    return {
      closers: [() => db.destroy(), () => grpc.close()],
      checks: { postgres: async () => void (await sql`SELECT 1`.execute(db)) },
    };
  },
});
