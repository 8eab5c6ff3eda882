/**
 * The anchor service's definition: the chain connection, the tree-head consumer, the batcher, the scheduler and the
 * gRPC binding. main.ts runs it; integration tests start the same definition in-process
 * (`startService(anchorService(), { config, overrides })`, test/support/start-anchor.ts).
 */
import type { ServiceDefinition } from '@agw/shared';
import { AnchorBatcher, type CheckpointDigests } from './anchoring/anchor-batcher';
import { AnchorService, type LocalTreeHeads } from './anchoring/anchor-service';
import { AnchorRepository } from './anchoring/anchor.repository';
import { createAnchorMetrics } from './anchoring/anchor.metrics';
import { registerAnchorLagGauges } from './anchoring/anchor-lag.metrics';
import { AnchorScheduler } from './anchoring/anchor.scheduler';
import { type AnchorChain, connectAnchorChain } from './chain/anchor-chain';
import { type AnchorConfig, loadAnchorConfig } from './config';
import { anchorGrpcService } from './grpc/anchor.grpc';
import { GrpcLocalTreeHeads } from './grpc/local-tree-heads.client';
import { consumeTreeHeads } from './nats/tree-built.consumer';

/** What an in-process test reaches into. */
export interface AnchorApi {
  /** the domain behind the gRPC service (list, verify, status, trigger) */
  service: AnchorService;
  /** the one anchoring transaction of the pending heads (a test runs it instead of waiting for the schedule) */
  batcher: AnchorBatcher;
  repo: AnchorRepository;
  /** the chain connected from the config, and its contract */
  chain: AnchorChain;
}

/**
 * What a test may put in place: the audit service's tree heads and checkpoint digests (default: asked of it
 * over gRPC), so a test names the local roots that verify.
 */
export interface AnchorOverrides {
  localHeads: LocalTreeHeads & { checkpointDigest: CheckpointDigests };
}

export const anchorService = (): ServiceDefinition<AnchorConfig, AnchorApi, AnchorOverrides> => ({
  name: 'anchor',
  loadConfig: loadAnchorConfig,
  start: async ({ config, logger, registry, postgres, nats, peers, overrides }) => {
    const db = await postgres();
    const repo = new AnchorRepository(db);
    registerAnchorLagGauges(registry, db);
    const chain = await connectAnchorChain(config, repo, logger);
    // tree heads of the audit service, under this service's one audit deadline (AUDIT_DEADLINE_MS)
    const { merkle: merkleClient } = peers(['merkle'], { deadlines: { merkle: config.auditDeadlineMs } });
    const localHeads = overrides.localHeads ?? new GrpcLocalTreeHeads(merkleClient);
    // each head's aggregate leaf covers its signed checkpoint (docs/evidence.md, "The anchor as a witness")
    const batcher = new AnchorBatcher(db, repo, () => chain.contract(), logger, config.maxLeavesPerTx, createAnchorMetrics(registry), localHeads.checkpointDigest);
    const triggerMinIntervalMs = (config.triggerMinIntervalSeconds ?? (chain.state.embedded ? 0 : 300)) * 1000;
    const service = new AnchorService({ repo, batcher, chain: () => chain.state, local: localHeads, logger, triggerMinIntervalMs });
    const consumer = await consumeTreeHeads(await nats(), repo, logger);
    const scheduler = new AnchorScheduler(batcher, repo, logger, config.tickSeconds * 1000);
    if (config.scheduleEnabled) scheduler.start();
    return {
      grpc: [anchorGrpcService(service, logger)],
      closers: [() => chain.close(), () => consumer.stop(), () => scheduler.stop()],
      api: { service, batcher, repo, chain },
    };
  },
});
