/**
 * What the API asks of anchoring, per tenant: trigger, status, verify (reads the chain and compares with
 * the local roots), the anchor references of the compliance export, and the chain's health.
 */
import { ConflictError, type Logger, RateLimitError } from '@agw/shared';
import type { Hex } from 'viem';
import { type AnchorContract, explorerAddressUrl, explorerTxUrl } from '../chain/anchor-contract';
import { aggregateLeafBytes, hashLeaf, rootFromProof } from './aggregate-tree';
import type { AnchorBatcher } from './anchor-batcher';
import type { AnchorRepository, AnchoredHead, ReceivedHead } from './anchor.repository';

/** The audit service's view of a tenant's tree heads (port; the gRPC Merkle client implements it). */
export interface LocalTreeHeads {
  rootAt(tenantId: string, treeIndex: number): Promise<string | undefined>;
}

export interface TenantAnchorView extends AnchoredHead {
  leaf_hex: string;
  explorer_tx_url: string;
}

export interface ChainState {
  contract?: AnchorContract;
  network: string;
  chainId: number;
  embedded: boolean;
  error?: string;
}

export class AnchorService {
  constructor(
    private readonly d: {
      repo: AnchorRepository;
      batcher: AnchorBatcher;
      chain: () => ChainState;
      local: LocalTreeHeads;
      logger: Logger;
      /** a trigger sends a transaction only if the last one is at least this old (gas on a real chain) */
      triggerMinIntervalMs?: number;
    },
  ) {}

  view(a: AnchoredHead): TenantAnchorView {
    return { ...a, leaf_hex: aggregateLeafBytes(a).toString('hex'), explorer_tx_url: explorerTxUrl(a.chain_id, a.tx_hash) };
  }

  /** Record the heads the caller just built, anchor everything pending, answer with the tenant's latest anchor. */
  async trigger(tenantId: string, heads: Array<Omit<ReceivedHead, 'tenant_id'>>): Promise<TenantAnchorView> {
    for (const h of heads) await this.d.repo.recordTreeHead(tenantId, h);
    const minInterval = this.d.triggerMinIntervalMs ?? 0;
    const last = minInterval > 0 ? (await this.d.repo.statsAcrossTenants()).last_anchor_at : null;
    const waitMs = last ? Date.parse(last) + minInterval - Date.now() : 0;
    if (waitMs > 0) {
      if ((await this.d.repo.pendingCount(tenantId)) > 0) {
        const m = `The last anchor transaction is recent: the tree head is pending and goes into the next transaction (in ${Math.ceil(waitMs / 1000)} s at the earliest, or the hourly run)`;
        throw new RateLimitError(m, m, Math.ceil(waitMs / 1000));
      }
    } else {
      await this.d.batcher.run({ wait: true });
    }
    const latest = await this.d.repo.latestAnchored(tenantId);
    if (!latest) throw new ConflictError('Nothing to anchor yet: the tenant has no audit records in a Merkle tree');
    return this.view(latest);
  }

  async status(tenantId: string, requestedChain: string) {
    const chain = this.d.chain();
    const [count, last, pending] = await Promise.all([this.d.repo.anchoredCount(tenantId), this.d.repo.latestAnchored(tenantId), this.d.repo.pendingCount(tenantId)]);
    let connected = false;
    if (chain.contract) connected = await chain.contract.blockNumber().then(() => true, () => false);
    return {
      network: chain.network,
      chain_id: chain.chainId,
      connected_chains: connected ? [chain.network] : [],
      contract_address: chain.contract?.address ?? '',
      explorer_address_url: chain.contract ? explorerAddressUrl(chain.chainId, chain.contract.address) : '',
      anchor_count: count,
      pending,
      requested_chain: requestedChain || chain.network,
      last_anchor: last ? this.view(last) : undefined,
    };
  }

  /**
   * Reads the chain: the RootAnchored event of the tenant's latest anchor transaction and the contract's
   * record of that root; recomputes the aggregate root from the tenant's root and its proof; checks the
   * tenant's root against the audit service's tree head. Verified only when all agree.
   */
  async verify(tenantId: string) {
    const last = await this.d.repo.latestAnchored(tenantId);
    if (!last) return { verified: false, on_chain_root: '', local_root: '', tx_hash: '', reason: 'no anchored tree head yet', local_tenant_root: '' };
    const chain = this.d.chain();
    if (!chain.contract) return { verified: false, on_chain_root: '', local_root: '', tx_hash: last.tx_hash, anchor: this.view(last), reason: `chain unavailable: ${chain.error ?? ''}`, local_tenant_root: '' };
    const localTenantRoot = (await this.d.local.rootAt(tenantId, last.tree_index)) ?? '';
    const leafHash = hashLeaf(aggregateLeafBytes({ tenant_id: tenantId, tree_size: last.tree_size, merkle_root: localTenantRoot || last.merkle_root, checkpoint_sha256: last.checkpoint_sha256 }));
    const local = rootFromProof(leafHash, last.leaf_index, last.leaf_count, last.aggregate_proof.map((p) => Buffer.from(p, 'hex')));
    const localRoot = local ? local.toString('hex') : '';
    const event = await chain.contract.rootOfTransaction(last.tx_hash as Hex);
    const record = event ? await chain.contract.anchorOf(event.root) : undefined;
    const onChainRoot = event?.root ?? '';
    let reason = '';
    if (!event) reason = 'anchor transaction not found on chain';
    else if (!record || record.timestamp === 0) reason = 'the contract has no record of the root';
    else if (localTenantRoot !== last.merkle_root) reason = "the audit service's tree head differs from the anchored tenant root";
    else if (onChainRoot !== localRoot) reason = 'the on-chain root differs from the root recomputed from the local tree head';
    return {
      verified: reason === '',
      on_chain_root: onChainRoot,
      local_root: localRoot,
      tx_hash: last.tx_hash,
      anchor: this.view(last),
      reason,
      local_tenant_root: localTenantRoot,
    };
  }

  async list(tenantId: string): Promise<TenantAnchorView[]> {
    return (await this.d.repo.listAnchored(tenantId)).map((a) => this.view(a));
  }

  async health() {
    const chain = this.d.chain();
    const stats = await this.d.repo.statsAcrossTenants();
    let blockNumber = 0;
    let error = chain.error ?? '';
    if (chain.contract) blockNumber = await chain.contract.blockNumber().catch((e: unknown) => ((error = e instanceof Error ? e.message : String(e)), 0));
    return {
      status: chain.contract && !error ? 'ok' : 'unavailable',
      network: chain.network,
      chain_id: chain.chainId,
      block_number: blockNumber,
      contract_address: chain.contract?.address ?? '',
      embedded: chain.embedded,
      last_anchor_at: stats.last_anchor_at ?? '',
      pending: stats.pending,
      error,
    };
  }
}
