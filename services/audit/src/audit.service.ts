/**
 * The audit service's definition: the chain, Merkle tree heads and proofs, checkpoints, receipts, the export's evidence and
 * their gRPC bindings on the stores and peer clients runService hands out. main.ts runs it; integration tests
 * start the same definition in-process (`startService(auditService(), { config, overrides })`).
 */
import type { ServiceDefinition } from '@agw/shared';
import { availableParallelism } from 'node:os';

import { AuditRecordRepository, DecisionCountsReads, SessionTotalsReads } from './chain/audit-record.repository';
import { AuditChain } from './chain/audit-chain';
import { instrumentChain } from './chain/chain.metrics';
import { consumeRecordRequests } from './nats/record-requests.consumer';
import { EventRelay } from './chain/event-relay';
import { DecisionInputRepository } from './chain/decision-input.repository';
import { type AuditConfig, loadAuditConfig } from './config';
import { auditGrpcService } from './grpc/audit.grpc';
import { ComplianceEvidence } from './export/compliance-evidence';
import { ExportRepository } from './export/export.repository';
import { complianceGrpcService, merkleGrpcService } from './grpc/merkle.grpc';
import { MerkleProofs } from './merkle/merkle-proofs';
import { createMerkleMetrics } from './merkle/merkle.metrics';
import { registerOutboxGauge } from './chain/outbox.metrics';
import { MerkleRepository } from './merkle/merkle.repository';
import { MerkleScheduler } from './merkle/merkle.scheduler';
import { TreeBuilder } from './merkle/tree-builder';
import { TreeBuiltPublisher } from './merkle/tree-built.publisher';
import { CheckpointRepository } from './checkpoints/checkpoint.repository';
import { Checkpoints } from './checkpoints/checkpoints';
import { CheckpointingSink } from './checkpoints/checkpointing.sink';
import { VaultNoteSigner } from './checkpoints/vault-note-signer';
import { ErasureStatements } from './checkpoints/erasure-statements';
import { createWitnessMetrics } from './checkpoints/witness.metrics';
import { CosignatureRepository, Witnessing } from './checkpoints/witnessing';
import { ReceiptProofs } from './receipts/receipt-proofs';
import { Receipts } from './receipts/receipts';

/** What an in-process test reaches into. */
export interface AuditApi {
  chain: AuditChain;
  /** the Merkle tree builder (a test builds the tree heads now instead of waiting for the schedule) */
  builder: TreeBuilder;
  checkpoints: Checkpoints;
}

/** What a test may put in place: the checkpoint and receipt signer (default: the vault's, over gRPC). */
export interface AuditOverrides {
  noteSigner: Pick<VaultNoteSigner, 'keyName' | 'sign' | 'verifierKey'>;
}

export const auditService = (): ServiceDefinition<AuditConfig, AuditApi, AuditOverrides> => ({
  name: 'audit',
  loadConfig: loadAuditConfig,
  start: async ({ config, logger, registry, postgres, nats, peers, overrides }) => {
    const db = await postgres();
    const bus = await nats();
    // decision events are committed to the outbox with their record and published from here after the commit
    const relay = new EventRelay(bus, db, logger);
    registerOutboxGauge(registry, db);
    relay.start();
    const chain = new AuditChain(new AuditRecordRepository(db), {
      tamperDemo: config.tamperDemo,
      streamPrefix: config.streamPrefix,
      onCommitted: (b) => relay.committed(b),
      verify: { databaseUrl: config.databaseUrl, threads: config.verifyThreads || availableParallelism() },
    });
    instrumentChain(chain, registry);
    // records other services send on the AUDIT stream instead of calling this one (the vault's control_plane records)
    const recordRequests = await consumeRecordRequests(bus, chain, logger);
    const merkleRepo = new MerkleRepository(db);
    const proofs = new MerkleProofs(merkleRepo);
    // this service's one peer (PEER_DEADLINE_MS): the vault signs its checkpoints. It calls no other service
    // (the compliance export's anchors and policy snapshot are added by the gateway), and the vault never calls
    // it back: the vault's records arrive on the AUDIT stream (above; docs/architecture.md).
    const { noteSigning: noteSigningClient } = peers(['noteSigning'], { deadlines: { noteSigning: config.peerDeadlineMs } });
    const noteSigner = overrides.noteSigner ?? new VaultNoteSigner(noteSigningClient);
    const checkpoints = new Checkpoints({ repo: new CheckpointRepository(db), heads: merkleRepo, proofs, signer: noteSigner, logger });
    const cosignatures = new CosignatureRepository(db);
    const witnessMetrics = createWitnessMetrics(registry);
    const witnessing = new Witnessing({
      witnesses: config.witnesses,
      repo: cosignatures,
      consistencyProof: (tenantId, a, b) => proofs.consistencyProofBySize(tenantId, a, b),
      logVkey: async (tenantId) => (await noteSigner.verifierKey(tenantId)).vkey,
      recordRefusal: async (tenantId, record, appendKey) => void (await chain.append(tenantId, record, { eventKind: 'witness_refused', appendKey })),
      refusals: witnessMetrics.refusals,
      cosignatures: witnessMetrics.cosignatures,
      logger,
      timeoutMs: config.witnessTimeoutMs,
    });
    const treeSink = new CheckpointingSink(checkpoints, new TreeBuiltPublisher(bus), logger, witnessing);
    const builder = new TreeBuilder(db, merkleRepo, treeSink, logger, { maxLeavesPerBuild: config.merkleMaxLeavesPerBuild, metrics: createMerkleMetrics(registry) });
    const scheduler = new MerkleScheduler(builder, logger, config.merkleTickSeconds * 1000);
    if (config.merkleScheduleEnabled) scheduler.start();
    const exportEvidence = new ComplianceEvidence({
      chain,
      records: new ExportRepository(db),
      proofs,
      checkpoints,
      cosignatures,
      verifierKey: (tenantId: string) => noteSigner.verifierKey(tenantId),
      decisionInputs: new DecisionInputRepository(db),
      maxRecords: config.exportMaxRecords,
      sampleProofs: config.exportSampleProofs,
      maxBytes: config.exportMaxBytes,
    });
    const receipts = new Receipts(noteSigner, { mmdSeconds: config.receiptMaxMergeDelaySeconds, keyLifetimeMs: config.receiptKeyLifetimeHours * 3600_000, logger });
    const receiptProofs = new ReceiptProofs({ chain, checkpoints, proofs, heads: merkleRepo, mmdSeconds: config.receiptMaxMergeDelaySeconds, cosignatures });
    const schedule = config.merkleScheduleEnabled ? `hourly (checked every ${config.merkleTickSeconds}s)` : 'disabled in this replica';
    return {
      grpc: [
        auditGrpcService(chain, new SessionTotalsReads(db), logger, new ErasureStatements(chain, noteSigner), new DecisionCountsReads(db), new DecisionInputRepository(db), {
          receipts,
          proofs: receiptProofs,
          onAppend: config.receiptsEnabled,
        }),
        merkleGrpcService({ builder, proofs, repo: merkleRepo, scheduler, schedule, checkpoints, cosignatures, verifierKey: (t) => noteSigner.verifierKey(t) }, logger),
        complianceGrpcService(exportEvidence, logger),
      ],
      closers: [() => recordRequests.stop(), () => relay.stop(), () => scheduler.stop()],
      api: { chain, builder, checkpoints },
    };
  },
});
