/**
 * The chain the anchor service writes to, chosen from its config: a remote RPC node (ANCHOR_RPC_URL, with
 * a key from ANCHOR_PRIVATE_KEY or ANCHOR_PRIVATE_KEY_FILE; required in the production profile) or, locally,
 * an embedded anvil with its state file. The contract is connected (deployed once, remembered in Postgres);
 * a remote node that is down is retried every 30 s while the service keeps answering from Postgres — the
 * chain is not a readiness condition, GET /api/health reports its state.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DependencyUnavailableError, type Logger } from '@agw/shared';
import type { Hex } from 'viem';
import type { ChainState } from '../anchoring/anchor-service';
import type { AnchorRepository } from '../anchoring/anchor.repository';
import { type AnchorConfig, ANVIL_DEV_KEY } from '../config';
import { AnchorContract, NETWORKS } from './anchor-contract';
import { type EmbeddedAnvil, startEmbeddedAnvil } from './embedded-anvil';

export interface AnchorChain {
  state: ChainState;
  /** the connected contract, or a 502 naming why there is none */
  contract(): AnchorContract;
  close(): Promise<void>;
}

export async function connectAnchorChain(config: AnchorConfig, repo: AnchorRepository, logger: Logger): Promise<AnchorChain> {
  let embedded: EmbeddedAnvil | undefined;
  let rpcUrl = config.rpcUrl;
  let chainId = config.chainId ?? NETWORKS[config.chain].id;
  let key = (config.privateKeyFile ? readFileSync(config.privateKeyFile, 'utf8').trim() : config.privateKey) as Hex | undefined;
  if (!rpcUrl && config.profile === 'production') throw new Error('ANCHOR_RPC_URL is required in the production profile (the embedded chain is for local runs)');
  if (!rpcUrl) {
    const stateFile = config.anvilStateFile === 'none' ? undefined : config.anvilStateFile || path.resolve('.run', 'anvil', `state-${config.anvilPort}.json`);
    embedded = await startEmbeddedAnvil({ host: config.anvilHost, port: config.anvilPort, chainId: NETWORKS.local.id, stateFile, logger });
    rpcUrl = embedded.rpcUrl;
    chainId = embedded.chainId;
    key = ANVIL_DEV_KEY;
  }
  if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
    await embedded?.stop();
    throw new Error('ANCHOR_PRIVATE_KEY (or ANCHOR_PRIVATE_KEY_FILE) is required with ANCHOR_RPC_URL');
  }
  const state: ChainState = { network: Object.entries(NETWORKS).find(([, c]) => c.id === chainId)?.[0] ?? `chain-${chainId}`, chainId, embedded: Boolean(embedded) };
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    try {
      state.contract = await AnchorContract.connect({ rpcUrl: rpcUrl!, chainId, privateKey: key!, store: repo, logger });
      state.error = undefined;
      logger.info({ network: state.network, chainId, contract: state.contract.address, embedded: state.embedded }, 'anchoring chain ready');
    } catch (e) {
      state.error = e instanceof Error ? e.message : String(e);
      if (embedded) throw e;
      logger.warn({ err: e }, 'chain not reachable; retrying in 30 s');
      retry = setTimeout(() => void connect(), 30_000);
      retry.unref();
    }
  };
  await connect();
  return {
    state,
    contract: () => {
      if (!state.contract) throw new DependencyUnavailableError(`chain ${state.network} unavailable: ${state.error ?? 'not connected'}`);
      return state.contract;
    },
    close: async () => {
      clearTimeout(retry);
      await embedded?.stop();
    },
  };
}
