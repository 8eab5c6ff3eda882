/** Reads the AuditAnchor contract with viem (`anchorOf(bytes32)`), for `agw-verify --rpc URL`. */
import { createPublicClient, http, parseAbi } from 'viem';
import type { OnChainReader } from './verify-export';

const abi = parseAbi(['function anchorOf(bytes32 root) view returns (uint64 timestamp, uint64 blockNumber, uint64 leafCount, uint64 sequence)']);

export function viemChainReader(rpcUrl: string): OnChainReader {
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: 15_000, retryCount: 1 }) });
  return {
    chainId: () => client.getChainId(),
    async anchorOf(contract: string, rootHex: string) {
      const [timestamp, , leafCount] = await client.readContract({ address: contract as `0x${string}`, abi, functionName: 'anchorOf', args: [`0x${rootHex}`] });
      return { timestamp: Number(timestamp), leafCount: Number(leafCount) };
    },
  };
}
