/**
 * Merkle tree heads and proofs (/audit/merkle/*): the tenant's RFC 9162 tree heads, inclusion proofs of a
 * record (against the latest or a chosen head), consistency proofs between heads, and the Merkle section of
 * GET /api/health. Answered by the audit service; bodies in docs/merkle-and-anchoring.md.
 */
import type { merkle } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { AuditFeature } from '../../features/audit.feature';
import { addPaths, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { authOf } from '../request-context';
import { pick } from '../present';
import { parseWith } from '../validation';

export const treeSchema = z
  .object({
    tree_index: z.number().int(),
    merkle_root: z.string(),
    record_count: z.number().int().meta({ description: 'leaves the cumulative root covers' }),
    from_record_id: z.number().int().nullable().meta({ description: 'the tenant’s record id of the first record this head added (record_count - records_added + 1)' }),
    to_record_id: z.number().int().nullable().meta({ description: 'the tenant’s record id of the last record this head added (record_count)' }),
    period_start: timestamp(),
    period_end: timestamp(),
    records_added: z.number().int(),
    built_by: z.string(),
  })
  .meta({ id: 'MerkleTree', description: 'A tree head (RFC 9162, cumulative per tenant)' });
const rootsResponse = z.object({ trees: z.array(treeSchema) });
const proofResponse = z.object({
  record_hash: z.string(),
  merkle_root: z.string(),
  proof: z.array(z.string()),
  verified: z.boolean(),
  record_id: z.number().int().meta({ description: 'the tenant’s record id: leaf_index + 1' }),
  leaf_index: z.number().int(),
  leaf_hash: z.string(),
  tree_index: z.number().int(),
  tree_size: z.number().int(),
  algorithm: z.string(),
});
const headSchema = z.object({ tree_index: z.number().int(), tree_size: z.number().int(), merkle_root: z.string() });
const consistencyResponse = z.object({ tree_n: z.number().int(), tree_m: z.number().int(), first: headSchema, second: headSchema, proof: z.array(z.string()), verified: z.boolean(), algorithm: z.string() });

/** A Merkle tree entry as the spec lists it (record_count = leaves the cumulative root covers). */
export function presentTree(t: merkle.TreeHead): z.infer<typeof treeSchema> {
  return {
    ...pick(t, ['tree_index', 'merkle_root']),
    record_count: t.tree_size,
    from_record_id: t.from_record_id || null,
    to_record_id: t.to_record_id || null,
    ...pick(t, ['period_start', 'period_end', 'records_added', 'built_by']),
  };
}

const consistencyParams = z.object({
  tree_n: z.coerce.number({ error: 'tree_n must be an integer' }).int('tree_n must be an integer').min(0, 'tree_n must be >= 0'),
  tree_m: z.coerce.number({ error: 'tree_m must be an integer' }).int('tree_m must be an integer').min(0, 'tree_m must be >= 0'),
});

const proofQuery = z.object({
  tree_index: z.coerce.number({ error: 'tree_index must be an integer' }).int('tree_index must be an integer').min(0, 'tree_index must be >= 0').optional(),
});

export function merkleRoutes(d: Pick<AuditFeature, 'merkle' | 'health'>): Router {
  const r = Router();
  d.health.addSection('merkle', async () => {
    const h = await d.merkle.health({});
    return {
      ...pick(h, ['status', 'tree_heads']),
      tenants_with_trees: h.tenants,
      last_build_at: h.last_build_at || null,
      records_pending: h.pending_records,
      schedule: h.schedule,
    };
  });
  r.get('/audit/merkle/roots', async (req, res) => {
    const { trees } = await d.merkle.listTreeHeads({ tenant_id: authOf(req).tenantId });
    reply(res, rootsResponse, { trees: trees.map(presentTree) });
  });

  r.get('/audit/merkle/proof/:record_hash', async (req, res) => {
    const { tree_index } = parseWith(proofQuery, { tree_index: req.query.tree_index }, 'query');
    const p = await d.merkle.inclusionProof({ tenant_id: authOf(req).tenantId, record_hash: String(req.params.record_hash), tree_index: tree_index });
    const tree = p.tree!;
    reply(res, proofResponse, {
      record_hash: p.record_hash,
      merkle_root: tree.merkle_root,
      proof: p.proof,
      verified: p.verified,
      record_id: p.record_id,
      leaf_index: p.leaf_index,
      leaf_hash: p.leaf_hash,
      tree_index: tree.tree_index,
      tree_size: tree.tree_size,
      algorithm: 'RFC 9162 SHA-256; leaf = the 32 bytes of record_hash',
    });
  });

  r.get('/audit/merkle/consistency/:tree_n/:tree_m', async (req, res) => {
    const { tree_n, tree_m } = parseWith(consistencyParams, req.params, 'path');
    const p = await d.merkle.consistencyProof({ tenant_id: authOf(req).tenantId, tree_n: tree_n, tree_m: tree_m });
    const head = (t: merkle.TreeHead) => ({ tree_index: t.tree_index, tree_size: t.tree_size, merkle_root: t.merkle_root });
    reply(res, consistencyResponse, { tree_n, tree_m, first: head(p.first!), second: head(p.second!), proof: p.proof, verified: p.verified, algorithm: 'RFC 9162 section 2.1.4' });
  });
  return r;
}

addPaths({
  '/audit/merkle/roots': { get: { summary: 'Merkle tree heads (RFC 9162, cumulative per tenant)', responses: { 200: response('tree heads', rootsResponse) } } },
  '/audit/merkle/proof/{record_hash}': {
    get: {
      summary: 'Inclusion proof of a record in the latest tree head (or the one given)',
      parameters: [
        pathParam('record_hash', { type: 'string', pattern: '^[0-9a-fA-F]{64}$' }),
        { name: 'tree_index', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'prove against this tree head (e.g. an anchored one) instead of the latest' },
      ],
      responses: { 200: response('the proof', proofResponse), 404: errors[404]('unknown record'), 409: errors[409]('not in a tree yet'), 422: errors[422]('not a SHA-256 hex') },
    },
  },
  '/audit/merkle/consistency/{tree_n}/{tree_m}': {
    get: {
      summary: 'RFC 9162 consistency proof: tree_n is a prefix of tree_m',
      parameters: ['tree_n', 'tree_m'].map((name) => pathParam(name, { type: 'integer', minimum: 0 })),
      responses: { 200: response('the proof', consistencyResponse), 404: errors[404]('unknown tree head'), 422: errors[422]('bad indexes') },
    },
  },
});
