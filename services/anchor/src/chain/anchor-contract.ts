/**
 * The chain side of anchoring with viem: connect to an RPC node, make sure the AuditAnchor contract is
 * deployed (address kept in Postgres per chain id and reused while the chain still has its code), write
 * a root, read it back. Chains come from viem's definitions (names, explorer links).
 */
import type { Logger } from '@agw/shared';
import {
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type WalletClient,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  http,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { anvil, polygon, polygonAmoy } from 'viem/chains';
import { type ContractArtifact, loadAnchorArtifact } from './contract-compiler';

/** The chains a deployment can anchor to, by the names the `anchor_chain` setting uses. */
export const NETWORKS: Record<string, Chain> = { polygon, 'polygon-amoy': polygonAmoy, local: anvil };

export function networkOfChainId(chainId: number): string {
  return Object.entries(NETWORKS).find(([, c]) => c.id === chainId)?.[0] ?? `chain-${chainId}`;
}

export function chainFor(chainId: number, rpcUrl: string): Chain {
  const known = Object.values(NETWORKS).find((c) => c.id === chainId);
  if (known) return { ...known, rpcUrls: { default: { http: [rpcUrl] } } } as Chain;
  return defineChain({ id: chainId, name: `chain ${chainId}`, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });
}

/** Explorer link of a transaction (empty for chains without an explorer, e.g. the local anvil). */
export function explorerTxUrl(chainId: number, txHash: string): string {
  const c = Object.values(NETWORKS).find((n) => n.id === chainId);
  const base = c?.blockExplorers?.default.url;
  return base && txHash ? `${base}/tx/${txHash}` : '';
}

export function explorerAddressUrl(chainId: number, address: string): string {
  const c = Object.values(NETWORKS).find((n) => n.id === chainId);
  const base = c?.blockExplorers?.default.url;
  return base && address ? `${base}/address/${address}` : '';
}

/** Where the deployed address is kept (the anchor repository implements it). */
export interface ContractAddressStore {
  contractAddress(chainId: number): Promise<string | undefined>;
  saveContractAddress(chainId: number, address: string, txHash: string): Promise<void>;
  /**
   * run `fn` while no other replica runs it for this chain (replicas starting together deploy once). `fn`
   * reads and saves the address through `locked`, the store on the lock's own connection: the lock holds a
   * pooled connection, and a read from the pool meanwhile waits for a second one.
   */
  withDeployLock<T>(chainId: number, fn: (locked: ContractAddressStore) => Promise<T>): Promise<T>;
}

export interface OnChainAnchor {
  txHash: Hex;
  blockNumber: number;
  anchoredAt: string;
}

export class AnchorContract {
  private constructor(
    readonly chainId: number,
    readonly network: string,
    readonly address: Hex,
    private readonly publicClient: PublicClient,
    private readonly wallet: WalletClient,
    private readonly account: Account,
    private readonly artifact: ContractArtifact,
  ) {}

  /** Connect, check the chain id, deploy the contract when this chain does not have it yet. */
  static async connect(o: { rpcUrl: string; chainId: number; privateKey: Hex; store: ContractAddressStore; logger: Logger }): Promise<AnchorContract> {
    const chain = chainFor(o.chainId, o.rpcUrl);
    const publicClient = createPublicClient({ chain, transport: http(o.rpcUrl, { retryCount: 2, timeout: 20_000 }) }) as PublicClient;
    const actual = await publicClient.getChainId();
    if (actual !== o.chainId) throw new Error(`the RPC node serves chain ${actual}, not the configured chain ${o.chainId}`);
    const account = privateKeyToAccount(o.privateKey);
    const wallet = createWalletClient({ account, chain, transport: http(o.rpcUrl, { retryCount: 2, timeout: 20_000 }) });
    const artifact = loadAnchorArtifact();
    // replicas starting at the same time on a fresh chain: one deploys, the others wait and read its address
    const address = await o.store.withDeployLock(o.chainId, (locked) => AnchorContract.deployedOrDeploy({ ...o, store: locked }, publicClient, wallet, account, artifact));
    return new AnchorContract(o.chainId, networkOfChainId(o.chainId), address, publicClient, wallet, account, artifact);
  }

  private static async deployedOrDeploy(
    o: { chainId: number; store: ContractAddressStore; logger: Logger },
    publicClient: PublicClient,
    wallet: WalletClient,
    account: Account,
    artifact: ContractArtifact,
  ): Promise<Hex> {
    let address = (await o.store.contractAddress(o.chainId)) as Hex | undefined;
    if (address) {
      const code = await publicClient.getCode({ address });
      if (!code || code === '0x') {
        o.logger.warn({ chainId: o.chainId, address }, 'stored anchor contract has no code on this chain (fresh chain?): deploying again');
        address = undefined;
      }
    }
    if (!address) {
      const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, account, chain: wallet.chain });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (!receipt.contractAddress) throw new Error(`contract deployment ${hash} produced no address`);
      address = receipt.contractAddress;
      await o.store.saveContractAddress(o.chainId, address, hash);
      o.logger.info({ chainId: o.chainId, address, tx: hash }, 'anchor contract deployed');
    }
    return address;
  }

  /** Write `root` on chain and wait for the receipt. */
  async anchor(rootHex: string, leafCount: number): Promise<OnChainAnchor> {
    const hash = await this.wallet.writeContract({
      address: this.address,
      abi: this.artifact.abi,
      functionName: 'anchor',
      args: [`0x${rootHex}`, BigInt(leafCount)],
      account: this.account,
      chain: this.wallet.chain,
    });
    const receipt = await this.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`anchor transaction ${hash} reverted`);
    const block = await this.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    return { txHash: hash, blockNumber: Number(receipt.blockNumber), anchoredAt: new Date(Number(block.timestamp) * 1000).toISOString() };
  }

  /** The root the transaction's RootAnchored event carries (read from the chain), or undefined. */
  async rootOfTransaction(txHash: Hex): Promise<{ root: string; blockNumber: number } | undefined> {
    const receipt = await this.publicClient.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
    if (!receipt) return undefined;
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== this.address.toLowerCase()) continue;
      try {
        const ev = decodeEventLog({ abi: this.artifact.abi, data: log.data, topics: log.topics });
        if (ev.eventName === 'RootAnchored') return { root: (ev.args as unknown as { root: Hex }).root.slice(2), blockNumber: Number(receipt.blockNumber) };
      } catch {
        /* another event */
      }
    }
    return undefined;
  }

  /** The contract's own record of `root` (timestamp 0 = never anchored). */
  async anchorOf(rootHex: string): Promise<{ timestamp: number; blockNumber: number; leafCount: number; sequence: number }> {
    const [timestamp, blockNumber, leafCount, sequence] = (await this.publicClient.readContract({
      address: this.address,
      abi: this.artifact.abi,
      functionName: 'anchorOf',
      args: [`0x${rootHex}`],
    })) as [bigint, bigint, bigint, bigint];
    return { timestamp: Number(timestamp), blockNumber: Number(blockNumber), leafCount: Number(leafCount), sequence: Number(sequence) };
  }

  async blockNumber(): Promise<number> {
    return Number(await this.publicClient.getBlockNumber());
  }
}
