/**
 * Anchoring (/anchor/*): the tenant's anchors on chain, verification of the latest anchored root against
 * the contract, an immediate build-and-anchor, and the blockchain section of GET /api/health. Answered by
 * the anchor service (and the audit service for the tree heads a trigger builds).
 */
import type { anchor } from '@agw/proto';
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
import { authOf } from '../request-context';
import { presentTree } from './merkle.routes';

function presentAnchor(a: anchor.TenantAnchor) {
  return {
    merkle_root: a.aggregateRoot,
    tx_hash: a.txHash,
    block_number: a.blockNumber,
    anchored_at: a.anchoredAt,
    network: a.network,
    chain_id: a.chainId,
    contract_address: a.contractAddress,
    explorer_tx_url: a.explorerTxUrl || null,
    tenant_root: a.tenantRoot,
    tree_index: a.treeIndex,
    tree_size: a.treeSize,
    aggregate_proof: { leaf_hex: a.leafHex, leaf_index: a.leafIndex, tree_size: a.leafCount, proof: a.aggregateProof },
  };
}

async function anchorChainOf(d: GatewayDeps, tenantId: string): Promise<string> {
  const s = await d.settings.stored(tenantId).catch(() => undefined);
  return typeof s?.anchor_chain === 'string' ? s.anchor_chain : '';
}

export function anchorRoutes(d: GatewayDeps): Router {
  const r = Router();
  d.health.addSection('blockchain', async () => {
    const h = await d.anchor.health({}, { deadlineMs: d.config.probeDeadlineMs });
    return {
      status: h.status,
      network: h.network,
      chain_id: h.chainId,
      connected: h.status === 'ok',
      block_number: h.blockNumber,
      contract_address: h.contractAddress || null,
      embedded_chain: h.embedded,
      last_anchor_at: h.lastAnchorAt || null,
      pending_tree_heads: h.pending,
      ...(h.error ? { error: h.error } : {}),
    };
  });
  r.get('/anchor/status', async (req, res) => {
    const tenantId = authOf(req).tenantId;
    const s = await d.anchor.status({ tenantId, requestedChain: await anchorChainOf(d, tenantId) });
    res.json({
      network: s.network,
      connected_chains: s.connectedChains,
      contract_address: s.contractAddress,
      anchor_count: s.anchorCount,
      last_anchor: s.lastAnchor ? presentAnchor(s.lastAnchor) : null,
      chain_id: s.chainId,
      requested_chain: s.requestedChain,
      pending_tree_heads: s.pending,
      explorer_address_url: s.explorerAddressUrl || null,
    });
  });

  r.get('/anchor/verify', async (req, res) => {
    const v = await d.anchor.verify({ tenantId: authOf(req).tenantId, requestedChain: '' });
    res.json({
      verified: v.verified,
      on_chain_root: v.onChainRoot || null,
      local_root: v.localRoot || null,
      tx_hash: v.txHash || null,
      tenant_root: v.anchor?.tenantRoot ?? null,
      local_tenant_root: v.localTenantRoot || null,
      ...(v.reason ? { reason: v.reason } : {}),
      anchor: v.anchor ? presentAnchor(v.anchor) : null,
    });
  });

  r.post('/anchor/trigger', async (req, res) => {
    const tenantId = authOf(req).tenantId;
    const built = await d.merkle.buildPending({ tenantId, builtBy: 'trigger' });
    const heads = (built.built.length ? built.built : built.latest ? [built.latest] : []).map((h) => ({
      tenantId,
      treeIndex: h.treeIndex,
      treeSize: h.treeSize,
      merkleRoot: h.merkleRoot,
      periodStart: h.periodStart,
      periodEnd: h.periodEnd,
    }));
    const out = await d.anchor.trigger({ tenantId, heads, requestedChain: await anchorChainOf(d, tenantId) });
    res.json({ status: 'anchored', ...presentAnchor(out.anchor!), tree_heads_built: built.built.map(presentTree) });
  });
  return r;
}

const ok = (description: string) => ({ description });
const secured = [{ ApiKey: [] }, { Bearer: [] }];
addPaths({
  '/anchor/status': { get: { security: secured, responses: { 200: ok('{network, connected_chains, contract_address, anchor_count, last_anchor}') } } },
  '/anchor/verify': { get: { security: secured, responses: { 200: ok('{verified, on_chain_root, local_root, tx_hash}') } } },
  '/anchor/trigger': { post: { security: secured, summary: 'Build pending tree heads and anchor them now', responses: { 200: ok('{status: anchored, merkle_root, tx_hash}'), 409: ok('nothing to anchor'), 429: ok('the last transaction is too recent; the head stays pending'), 502: ok('anchor service unreachable') } } },
});
