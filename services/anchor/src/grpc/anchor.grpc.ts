/** gRPC adapter of the anchor service: translate messages, call the domain, nothing else. */
import { anchor as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, implement } from '@agw/shared';
import type { AnchorService, TenantAnchorView } from '../anchoring/anchor-service';

export function toTenantAnchor(a: TenantAnchorView): pb.TenantAnchor {
  return {
    treeIndex: a.tree_index,
    treeSize: a.tree_size,
    tenantRoot: a.merkle_root,
    aggregateRoot: a.aggregate_root,
    leafIndex: a.leaf_index,
    leafCount: a.leaf_count,
    aggregateProof: a.aggregate_proof,
    txHash: a.tx_hash,
    blockNumber: a.block_number,
    anchoredAt: a.anchored_at,
    network: a.network,
    chainId: a.chain_id,
    contractAddress: a.contract_address,
    explorerTxUrl: a.explorer_tx_url,
    batchId: a.batch_id,
    leafHex: a.leaf_hex,
    checkpointSha256: a.checkpoint_sha256 ?? '',
  };
}

const tenant = (id: string) => {
  if (!id) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
  return id;
};

export function anchorGrpcService(service: AnchorService, logger: Logger): GrpcServiceBinding {
  return {
    definition: pb.AnchorServiceService,
    implementation: implement(
      pb.AnchorServiceService,
      {
        trigger: async (req) => {
          req.heads.forEach((h, i) => {
            if (!/^[0-9a-f]{64}$/.test(h.merkleRoot) || h.treeSize < 1 || h.treeIndex < 0 || Number.isNaN(Date.parse(h.periodEnd)) || Number.isNaN(Date.parse(h.periodStart))) {
              throw InputError.at(['heads', i], 'a tree head needs a 64-hex merkle_root, tree_size >= 1, tree_index >= 0 and ISO timestamps', 'value_error');
            }
          });
          const a = await service.trigger(
            tenant(req.tenantId),
            req.heads.map((h) => ({ tree_index: h.treeIndex, tree_size: h.treeSize, merkle_root: h.merkleRoot, period_start: h.periodStart, period_end: h.periodEnd })),
          );
          return { status: 'anchored', anchor: toTenantAnchor(a) };
        },
        status: async (req) => {
          const s = await service.status(tenant(req.tenantId), req.requestedChain);
          return {
            network: s.network,
            connectedChains: s.connected_chains,
            contractAddress: s.contract_address,
            anchorCount: s.anchor_count,
            lastAnchor: s.last_anchor ? toTenantAnchor(s.last_anchor) : undefined,
            chainId: s.chain_id,
            requestedChain: s.requested_chain,
            pending: s.pending,
            explorerAddressUrl: s.explorer_address_url,
          };
        },
        verify: async (req) => {
          const v = await service.verify(tenant(req.tenantId));
          return {
            verified: v.verified,
            onChainRoot: v.on_chain_root,
            localRoot: v.local_root,
            txHash: v.tx_hash,
            anchor: v.anchor ? toTenantAnchor(v.anchor) : undefined,
            reason: v.reason,
            localTenantRoot: v.local_tenant_root,
          };
        },
        listAnchors: async (req) => ({ anchors: (await service.list(tenant(req.tenantId))).map(toTenantAnchor) }),
        health: async () => {
          const h = await service.health();
          return {
            status: h.status,
            network: h.network,
            chainId: h.chain_id,
            blockNumber: h.block_number,
            contractAddress: h.contract_address,
            embedded: h.embedded,
            lastAnchorAt: h.last_anchor_at,
            pending: h.pending,
            error: h.error,
          };
        },
      },
      logger,
    ),
  };
}
