/** Reads the AuditAnchor contract with viem (`anchorOf(bytes32)`), for `agw-verify --rpc URL`. */
import { createPublicClient, decodeEventLog, http, parseAbi } from 'viem';
import type { OnChainReader } from './verify-export';

const abi = parseAbi([
  'function anchorOf(bytes32 root) view returns (uint64 timestamp, uint64 blockNumber, uint64 leafCount, uint64 sequence)',
  'event RootAnchored(uint64 indexed sequence, bytes32 indexed root, uint64 leafCount, uint64 timestamp)',
]);

export function viemChainReader(rpcUrl: string): OnChainReader {
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: 15_000, retryCount: 1 }) });
  return {
    chainId: () => client.getChainId(),
    async anchorOf(contract: string, rootHex: string) {
      const [timestamp, , leafCount] = await client.readContract({ address: contract as `0x${string}`, abi, functionName: 'anchorOf', args: [`0x${rootHex}`] });
      return { timestamp: Number(timestamp), leafCount: Number(leafCount) };
    },
    async rootsOfTransaction(contract: string, txHash: string) {
      const receipt = await client.getTransactionReceipt({ hash: txHash as `0x${string}` }).catch((e: unknown) => {
        if ((e as { name?: string }).name === 'TransactionReceiptNotFoundError') return undefined;
        throw e;
      });
      if (!receipt || receipt.status !== 'success') return undefined;
      const roots: string[] = [];
      for (const log of receipt.logs) {
        if (log.address.toLowerCase() !== contract.toLowerCase()) continue;
        try {
          const ev = decodeEventLog({ abi, data: log.data, topics: log.topics });
          if (ev.eventName === 'RootAnchored') roots.push((ev.args.root as string).slice(2).toLowerCase());
        } catch {
          /* another event */
        }
      }
      return roots;
    },
  };
}
