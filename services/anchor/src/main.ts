/** Composition root of the anchor service: config, chain (embedded anvil or RPC), stores, consumer, gRPC, shutdown. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { connectBus, createDb, createLogger, createMetricsRegistry, DependencyUnavailableError, pingPostgres, runService, startGrpcServer } from '@agw/shared';
import type { Hex } from 'viem';
import { AnchorBatcher } from './anchoring/anchor-batcher';
import { AnchorService, type ChainState } from './anchoring/anchor-service';
import { AnchorRepository } from './anchoring/anchor.repository';
import { createAnchorMetrics } from './anchoring/anchor.metrics';
import { AnchorScheduler } from './anchoring/anchor.scheduler';
import { AnchorContract, NETWORKS } from './chain/anchor-contract';
import { type EmbeddedAnvil, startEmbeddedAnvil } from './chain/embedded-anvil';
import { ANVIL_DEV_KEY, loadAnchorConfig } from './config';
import { anchorGrpcService } from './grpc/anchor.grpc';
import { GrpcLocalTreeHeads, createMerkleClient } from './grpc/local-tree-heads.client';
import { consumeTreeHeads } from './nats/tree-built.consumer';

const config = loadAnchorConfig();
const logger = createLogger('anchor', config.logLevel);
const registry = createMetricsRegistry('anchor');

runService({
  name: 'anchor',
  logger,
  registry,
  opsHost: config.opsHost,
  opsPort: config.opsPort,
  start: async () => {
    const db = createDb(config.databaseUrl);
    await pingPostgres(db);
    const repo = new AnchorRepository(db);
    const closers: Array<() => Promise<void> | void> = [() => db.destroy()];

    let embedded: EmbeddedAnvil | undefined;
    let rpcUrl = config.rpcUrl;
    let chainId = config.chainId ?? NETWORKS[config.chain].id;
    let key = (config.privateKeyFile ? readFileSync(config.privateKeyFile, 'utf8').trim() : config.privateKey) as Hex | undefined;
    if (!rpcUrl && config.profile === 'production') throw new Error('ANCHOR_RPC_URL is required in the production profile (the embedded chain is for local runs)');
    if (!rpcUrl) {
      const stateFile = config.anvilStateFile === 'none' ? undefined : config.anvilStateFile || path.resolve('.run', 'anvil', `state-${config.anvilPort}.json`);
      embedded = await startEmbeddedAnvil({ host: config.anvilHost, port: config.anvilPort, chainId: NETWORKS.local.id, stateFile, logger });
      closers.push(() => embedded?.stop());
      rpcUrl = embedded.rpcUrl;
      chainId = embedded.chainId;
      key = ANVIL_DEV_KEY;
    }
    if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error('ANCHOR_PRIVATE_KEY (or ANCHOR_PRIVATE_KEY_FILE) is required with ANCHOR_RPC_URL');
    const state: ChainState = { network: Object.entries(NETWORKS).find(([, c]) => c.id === chainId)?.[0] ?? `chain-${chainId}`, chainId, embedded: Boolean(embedded) };
    const connect = async () => {
      try {
        state.contract = await AnchorContract.connect({ rpcUrl: rpcUrl!, chainId, privateKey: key!, store: repo, logger });
        state.error = undefined;
        logger.info({ network: state.network, chainId, contract: state.contract.address, embedded: state.embedded }, 'anchoring chain ready');
      } catch (e) {
        state.error = e instanceof Error ? e.message : String(e);
        if (embedded) throw e;
        logger.warn({ err: e }, 'chain not reachable; retrying in 30 s');
        setTimeout(() => void connect(), 30_000).unref();
      }
    };
    await connect();

    const batcher = new AnchorBatcher(
      db,
      repo,
      () => {
        if (!state.contract) throw new DependencyUnavailableError(`chain ${state.network} unavailable: ${state.error ?? 'not connected'}`);
        return state.contract;
      },
      logger,
      config.maxLeavesPerTx,
      createAnchorMetrics(registry),
    );
    const merkleClient = createMerkleClient(config.auditGrpcUrl);
    closers.push(() => merkleClient.close());
    const triggerMinIntervalMs = (config.triggerMinIntervalSeconds ?? (embedded ? 0 : 300)) * 1000;
    const service = new AnchorService({ repo, batcher, chain: () => state, local: new GrpcLocalTreeHeads(merkleClient), logger, triggerMinIntervalMs });

    const bus = await connectBus(config.natsUrl, config.streamPrefix, 'anchor');
    closers.push(() => bus.close());
    const consumer = await consumeTreeHeads(bus, repo, logger);
    closers.push(() => consumer.stop());
    const scheduler = new AnchorScheduler(batcher, repo, logger, config.tickSeconds * 1000);
    if (config.scheduleEnabled) scheduler.start();
    closers.push(() => scheduler.stop());

    const grpc = await startGrpcServer(config.grpcHost, config.grpcPort, [anchorGrpcService(service, logger)]);
    closers.push(() => grpc.close());
    logger.info({ port: grpc.port }, 'anchor gRPC listening');
    return {
      closers,
      // the chain is not a readiness condition: status, verify and export references still work from
      // Postgres while a remote RPC node is down; GET /api/health reports the chain's state.
      checks: { postgres: () => pingPostgres(db) },
    };
  },
});
