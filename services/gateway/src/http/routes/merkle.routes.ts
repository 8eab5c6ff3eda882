/**
 * Merkle tree heads and proofs (/audit/merkle/*): the tenant's RFC 9162 tree heads, inclusion proofs of a
 * record (against the latest or a chosen head), consistency proofs between heads, and the Merkle section of
 * GET /api/health. Answered by the audit service; bodies in docs/merkle-and-anchoring.md.
 */
import type { merkle } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
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

const consistencyParams = z.object({
  tree_n: z.coerce.number({ error: 'tree_n must be an integer' }).int('tree_n must be an integer').min(0, 'tree_n must be >= 0'),
  tree_m: z.coerce.number({ error: 'tree_m must be an integer' }).int('tree_m must be an integer').min(0, 'tree_m must be >= 0'),
});

const proofQuery = z.object({
  tree_index: z.coerce.number({ error: 'tree_index must be an integer' }).int('tree_index must be an integer').min(0, 'tree_index must be >= 0').optional(),
});

export function merkleRoutes(d: GatewayDeps): Router {
  const r = Router();
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
  return r;
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
});
