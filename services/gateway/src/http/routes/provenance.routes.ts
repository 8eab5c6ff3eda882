/**
 * Merkle tree heads and proofs, anchoring and compliance export (issue: provable audit). Thin adapter:
 * validate, call the audit service (MerkleService, ComplianceService) or the anchor service over gRPC,
 * present. Response bodies are documented in docs/merkle-and-anchoring.md and docs/compliance-export.md.
 */
import type { anchor, merkle } from '@agw/proto';
import { NotFoundError } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
import { uuidParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

/** A Merkle tree entry as the spec lists it (record_count = leaves the cumulative root covers). */
export function presentTree(t: merkle.TreeHead) {
  return {
    tree_index: t.treeIndex,
    merkle_root: t.merkleRoot,
    record_count: t.treeSize,
    from_record_id: t.fromRecordId || null,
    to_record_id: t.toRecordId || null,
    period_start: t.periodStart,
    period_end: t.periodEnd,
    records_added: t.recordsAdded,
    built_by: t.builtBy,
  };
}

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

const consistencyParams = z.object({
  tree_n: z.coerce.number({ error: 'tree_n must be an integer' }).int('tree_n must be an integer').min(0, 'tree_n must be >= 0'),
  tree_m: z.coerce.number({ error: 'tree_m must be an integer' }).int('tree_m must be an integer').min(0, 'tree_m must be >= 0'),
});

const proofQuery = z.object({
  tree_index: z.coerce.number({ error: 'tree_index must be an integer' }).int('tree_index must be an integer').min(0, 'tree_index must be >= 0').optional(),
});

const exportQuery = z.object({
  from: z.string().max(40).optional(),
  to: z.string().max(40).optional(),
  format: z.enum(['json', 'pdf'], { error: "format must be 'json' or 'pdf'" }).default('json'),
});

async function anchorChainOf(d: GatewayDeps, tenantId: string): Promise<string> {
  const s = await d.settings.stored(tenantId).catch(() => undefined);
  return typeof s?.anchor_chain === 'string' ? s.anchor_chain : '';
}

export function provenanceRoutes(d: GatewayDeps): Router {
  const r = Router();

  r.get('/audit/merkle/roots', async (req, res) => {
    const { trees } = await d.merkle.listTreeHeads({ tenantId: authOf(req).tenantId });
    res.json({ trees: trees.map(presentTree) });
  });

  r.get('/audit/merkle/proof/:record_hash', async (req, res) => {
    const { tree_index } = parseWith(proofQuery, { tree_index: req.query.tree_index }, 'query');
    const p = await d.merkle.inclusionProof({ tenantId: authOf(req).tenantId, recordHash: String(req.params.record_hash), treeIndex: tree_index });
    const tree = p.tree!;
    res.json({
      record_hash: p.recordHash,
      merkle_root: tree.merkleRoot,
      proof: p.proof,
      verified: p.verified,
      record_id: p.recordId,
      leaf_index: p.leafIndex,
      leaf_hash: p.leafHash,
      tree_index: tree.treeIndex,
      tree_size: tree.treeSize,
      algorithm: 'RFC 9162 SHA-256; leaf = the 32 bytes of record_hash',
    });
  });

  r.get('/audit/merkle/consistency/:tree_n/:tree_m', async (req, res) => {
    const { tree_n, tree_m } = parseWith(consistencyParams, req.params, 'path');
    const p = await d.merkle.consistencyProof({ tenantId: authOf(req).tenantId, treeN: tree_n, treeM: tree_m });
    const head = (t: merkle.TreeHead) => ({ tree_index: t.treeIndex, tree_size: t.treeSize, merkle_root: t.merkleRoot });
    res.json({ tree_n, tree_m, first: head(p.first!), second: head(p.second!), proof: p.proof, verified: p.verified, algorithm: 'RFC 9162 section 2.1.4' });
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

  r.get('/compliance/export/:tenant_id', async (req, res) => {
    const auth = authOf(req);
    const tenantId = uuidParam(String(req.params.tenant_id), 'Tenant');
    if (tenantId !== auth.tenantId.toLowerCase()) throw new NotFoundError('Tenant not found');
    const q = parseWith(exportQuery, { from: req.query.from, to: req.query.to, format: req.query.format }, 'query');
    const out = await d.compliance.export({ tenantId: auth.tenantId, from: q.from ?? '', to: q.to ?? '', format: q.format });
    res.setHeader('content-type', out.contentType);
    res.setHeader('content-disposition', `${q.format === 'pdf' ? 'attachment' : 'inline'}; filename="${out.filename}"`);
    res.send(Buffer.from(out.content));
  });

  return r;
}

/** GET /api/health: blockchain and Merkle sections, asked of the services that own them. */
export function addProvenanceHealth(d: GatewayDeps): void {
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
  d.health.addSection('merkle', async () => {
    const h = await d.merkle.health({}, { deadlineMs: d.config.probeDeadlineMs });
    return {
      status: h.status,
      tree_heads: h.treeHeads,
      tenants_with_trees: h.tenants,
      last_build_at: h.lastBuildAt || null,
      records_pending: h.pendingRecords,
      schedule: h.schedule,
    };
  });
}

const ok = (description: string) => ({ description });
const secured = [{ ApiKey: [] }, { Bearer: [] }];
addPaths({
  '/audit/merkle/roots': { get: { security: secured, summary: 'Merkle tree heads (RFC 9162, cumulative per tenant)', responses: { 200: ok('{trees: [Merkle tree entry]}') } } },
  '/audit/merkle/proof/{record_hash}': {
    get: {
      security: secured,
      summary: 'Inclusion proof of a record in the latest tree head',
      parameters: [
        { name: 'record_hash', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' } },
        { name: 'tree_index', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'prove against this tree head (e.g. an anchored one) instead of the latest' },
      ],
      responses: { 200: ok('{record_hash, merkle_root, proof, verified, leaf_index, tree_index, tree_size}'), 404: ok('unknown record'), 409: ok('not in a tree yet'), 422: ok('not a SHA-256 hex') },
    },
  },
  '/audit/merkle/consistency/{tree_n}/{tree_m}': {
    get: {
      security: secured,
      summary: 'RFC 9162 consistency proof: tree_n is a prefix of tree_m',
      parameters: ['tree_n', 'tree_m'].map((name) => ({ name, in: 'path', required: true, schema: { type: 'integer', minimum: 0 } })),
      responses: { 200: ok('{tree_n, tree_m, first: {tree_index, tree_size, merkle_root}, second: {...}, proof, verified}'), 404: ok('unknown tree head'), 422: ok('bad indexes') },
    },
  },
  '/anchor/status': { get: { security: secured, responses: { 200: ok('{network, connected_chains, contract_address, anchor_count, last_anchor}') } } },
  '/anchor/verify': { get: { security: secured, responses: { 200: ok('{verified, on_chain_root, local_root, tx_hash}') } } },
  '/anchor/trigger': { post: { security: secured, summary: 'Build pending tree heads and anchor them now', responses: { 200: ok('{status: anchored, merkle_root, tx_hash}'), 409: ok('nothing to anchor'), 429: ok('the last transaction is too recent; the head stays pending'), 502: ok('anchor service unreachable') } } },
  '/compliance/export/{tenant_id}': {
    get: {
      security: secured,
      parameters: [
        { name: 'tenant_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
        { name: 'from', in: 'query', schema: { type: 'string', description: 'YYYY-MM-DD or ISO 8601 timestamp' } },
        { name: 'to', in: 'query', schema: { type: 'string', description: 'YYYY-MM-DD (inclusive) or ISO 8601 timestamp' } },
        { name: 'format', in: 'query', schema: { type: 'string', enum: ['json', 'pdf'], default: 'json' } },
      ],
      responses: { 200: ok('the package (application/json or application/pdf)'), 404: ok('another tenant'), 422: ok('bad dates or format') },
    },
  },
});
