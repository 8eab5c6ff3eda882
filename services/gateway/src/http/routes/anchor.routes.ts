/**
 * Anchoring (/anchor/*): the tenant's anchors on chain, verification of the latest anchored root against
 * the contract, an immediate build-and-anchor, and the blockchain section of GET /api/health. Answered by
 * the anchor service (and the audit service for the tree heads a trigger builds).
 */
import type { anchor } from '@agw/proto';
import { Router } from 'express';
import type { AuditFeature } from '../../features/audit.feature';
import { z } from 'zod';
import { addPaths } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { authOf } from '../request-context';
import { pick } from '../present';
import { presentTree, treeSchema } from './merkle.routes';

export const anchorSchema = z
  .object({
    merkle_root: z.string().meta({ description: 'the aggregate root written on chain' }),
    tx_hash: z.string(),
    block_number: z.number().int(),
    anchored_at: timestamp(),
    network: z.string(),
    chain_id: z.number().int(),
    contract_address: z.string(),
    explorer_tx_url: z.string().nullable(),
    tenant_root: z.string(),
    tree_index: z.number().int(),
    tree_size: z.number().int(),
    aggregate_proof: z.object({ leaf_hex: z.string(), leaf_index: z.number().int(), tree_size: z.number().int(), proof: z.array(z.string()) }),
    checkpoint_sha256: z.string().nullable().meta({ description: 'SHA-256 of the signed checkpoint the anchored leaf covers (docs/evidence.md); null: anchored without one' }),
  })
  .meta({ id: 'Anchor', description: 'A tenant root anchored on chain (inside an aggregate root of all tenants)' });
const statusResponse = z.object({
  network: z.string(),
  connected_chains: z.array(z.string()),
  contract_address: z.string(),
  anchor_count: z.number().int(),
  last_anchor: anchorSchema.nullable(),
  chain_id: z.number().int(),
  requested_chain: z.string(),
  pending_tree_heads: z.number().int(),
  explorer_address_url: z.string().nullable(),
});
const verifyResponse = z.object({
  verified: z.boolean(),
  on_chain_root: z.string().nullable(),
  local_root: z.string().nullable(),
  tx_hash: z.string().nullable(),
  tenant_root: z.string().nullable(),
  local_tenant_root: z.string().nullable(),
  reason: z.string().optional(),
  anchor: anchorSchema.nullable(),
});
const triggerResponse = anchorSchema.extend({ status: z.literal('anchored'), tree_heads_built: z.array(treeSchema) });

function presentAnchor(a: anchor.TenantAnchor): z.infer<typeof anchorSchema> {
  return {
    merkle_root: a.aggregate_root,
    ...pick(a, ['tx_hash', 'block_number', 'anchored_at', 'network', 'chain_id', 'contract_address']),
    explorer_tx_url: a.explorer_tx_url || null,
    ...pick(a, ['tenant_root', 'tree_index', 'tree_size']),
    aggregate_proof: { leaf_hex: a.leaf_hex, leaf_index: a.leaf_index, tree_size: a.leaf_count, proof: a.aggregate_proof },
    // the signed checkpoint the anchored leaf covers (docs/evidence.md); null: anchored without one
    checkpoint_sha256: a.checkpoint_sha256 || null,
  };
}

async function anchorChainOf(d: Pick<AuditFeature, 'settings'>, tenantId: string): Promise<string> {
  const s = await d.settings.stored(tenantId).catch(() => undefined);
  return typeof s?.anchor_chain === 'string' ? s.anchor_chain : '';
}

export function anchorRoutes(d: Pick<AuditFeature, 'anchor' | 'merkle' | 'health' | 'settings'>): Router {
  const r = Router();
  d.health.addSection('blockchain', async () => {
    const h = await d.anchor.health({});
    return {
      ...pick(h, ['status', 'network', 'chain_id']),
      connected: h.status === 'ok',
      block_number: h.block_number,
      contract_address: h.contract_address || null,
      embedded_chain: h.embedded,
      last_anchor_at: h.last_anchor_at || null,
      pending_tree_heads: h.pending,
      ...(h.error ? { error: h.error } : {}),
    };
  });
  r.get('/anchor/status', async (req, res) => {
    const tenantId = authOf(req).tenantId;
    const s = await d.anchor.status({ tenant_id: tenantId, requested_chain: await anchorChainOf(d, tenantId) });
    reply(res, statusResponse, {
      ...pick(s, ['network', 'connected_chains', 'contract_address', 'anchor_count']),
      last_anchor: s.last_anchor ? presentAnchor(s.last_anchor) : null,
      ...pick(s, ['chain_id', 'requested_chain']),
      pending_tree_heads: s.pending,
      explorer_address_url: s.explorer_address_url || null,
    });
  });

  r.get('/anchor/verify', async (req, res) => {
    const v = await d.anchor.verify({ tenant_id: authOf(req).tenantId, requested_chain: '' });
    reply(res, verifyResponse, {
      verified: v.verified,
      on_chain_root: v.on_chain_root || null,
      local_root: v.local_root || null,
      tx_hash: v.tx_hash || null,
      tenant_root: v.anchor?.tenant_root ?? null,
      local_tenant_root: v.local_tenant_root || null,
      ...(v.reason ? { reason: v.reason } : {}),
      anchor: v.anchor ? presentAnchor(v.anchor) : null,
    });
  });

  r.post('/anchor/trigger', async (req, res) => {
    const tenantId = authOf(req).tenantId;
    const built = await d.merkle.buildPending({ tenant_id: tenantId, built_by: 'trigger' });
    const heads = (built.built.length ? built.built : built.latest ? [built.latest] : []).map((h) => ({
      tenant_id: tenantId,
      tree_index: h.tree_index,
      tree_size: h.tree_size,
      merkle_root: h.merkle_root,
      period_start: h.period_start,
      period_end: h.period_end,
    }));
    const out = await d.anchor.trigger({ tenant_id: tenantId, heads, requested_chain: await anchorChainOf(d, tenantId) });
    reply(res, triggerResponse, { status: 'anchored' as const, ...presentAnchor(out.anchor!), tree_heads_built: built.built.map(presentTree) });
  });
  return r;
}

addPaths({
  '/anchor/status': { get: { summary: 'The tenant’s anchoring: network, contract, count and the last anchor', responses: { 200: response('status', statusResponse) } } },
  '/anchor/verify': { get: { summary: 'Check the latest anchored root against the contract', responses: { 200: response('verification', verifyResponse) } } },
  '/anchor/trigger': {
    post: {
      summary: 'Build pending tree heads and anchor them now',
      responses: {
        200: response('anchored', triggerResponse),
        409: errors[409]('nothing to anchor'),
        429: errors[429]('the last transaction is too recent; the head stays pending'),
        502: errors[502]('anchor service unreachable'),
      },
    },
  },
});
