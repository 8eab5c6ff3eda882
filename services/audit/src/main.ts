/** Composition root of the audit service: config, stores, gRPC server, shutdown. No logic here. */
import { connectBus, createDb, createLogger, createMetricsRegistry, pingPostgres, runService, startGrpcServer } from '@agw/shared';
import { AuditRecordRepository } from './chain/audit-record.repository';
import { AuditChain } from './chain/audit-chain';
import { EventRelay } from './chain/event-relay';
import { SessionTotalsRepository } from './chain/session-totals.repository';
import { loadAuditConfig } from './config';
import { auditGrpcService } from './grpc/audit.grpc';
import { ComplianceExporter } from './export/compliance-exporter';
import { ExportRepository } from './export/export.repository';
import { GrpcAnchorReferences, GrpcPolicySnapshot, createAnchorClient, createPolicyClient } from './export/peer-sources';
import { complianceGrpcService, merkleGrpcService } from './grpc/merkle.grpc';
import { MerkleProofs } from './merkle/merkle-proofs';
import { createMerkleMetrics } from './merkle/merkle.metrics';
import { MerkleRepository } from './merkle/merkle.repository';
import { MerkleScheduler } from './merkle/merkle.scheduler';
import { TreeBuilder } from './merkle/tree-builder';
import { TreeBuiltPublisher } from './merkle/tree-built.publisher';

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
    await pingPostgres(db);
    const bus = await connectBus(config.natsUrl, config.streamPrefix, 'audit');
    // decision events are committed to the outbox with their record and published from here after the commit
    const relay = new EventRelay(bus, db, logger);
    relay.start();
    const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: config.tamperDemo, streamPrefix: config.streamPrefix, onCommitted: (b) => relay.committed(b) });
    const merkleRepo = new MerkleRepository(db);
    const builder = new TreeBuilder(db, merkleRepo, new TreeBuiltPublisher(bus), logger, { maxLeavesPerBuild: config.merkleMaxLeavesPerBuild, metrics: createMerkleMetrics(registry) });
    const proofs = new MerkleProofs(merkleRepo);
    const scheduler = new MerkleScheduler(builder, logger, config.merkleTickSeconds * 1000);
    if (config.merkleScheduleEnabled) scheduler.start();
    const anchorClient = createAnchorClient(config.anchorGrpcUrl);
    const policyClient = createPolicyClient(config.policyGrpcUrl);
    const exporter = new ComplianceExporter({
      chain,
      records: new ExportRepository(db),
      proofs,
      anchors: new GrpcAnchorReferences(anchorClient),
      policy: new GrpcPolicySnapshot(policyClient),
      maxRecords: config.exportMaxRecords,
      sampleProofs: config.exportSampleProofs,
      maxBytes: config.exportMaxBytes,
    });
    const schedule = config.merkleScheduleEnabled ? `hourly (checked every ${config.merkleTickSeconds}s)` : 'disabled in this replica';
    const grpc = await startGrpcServer(config.grpcHost, config.grpcPort, [
      auditGrpcService(chain, new SessionTotalsRepository(db), logger),
      merkleGrpcService({ builder, proofs, repo: merkleRepo, scheduler, schedule }, logger),
      complianceGrpcService(exporter, logger),
    ]);
    logger.info({ port: grpc.port }, 'audit gRPC listening');
    return {
      closers: [() => db.destroy(), () => relay.stop(), () => bus.close(), () => anchorClient.close(), () => policyClient.close(), () => scheduler.stop(), () => grpc.close()],
      checks: { postgres: () => pingPostgres(db) },
    };
  },
});
