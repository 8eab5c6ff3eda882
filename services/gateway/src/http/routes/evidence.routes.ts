/**
 * Evidence anyone can check offline (/audit/checkpoints*, /audit/verifier-key): the caller's tenant's
 * signed checkpoints (C2SP tlog-checkpoint in a C2SP signed note, Ed25519 key held by the vault's HSM)
 * and the verifier key in the standard `name+keyhash+base64` form. Answered by the audit service (which
 * asks the vault); walk-through in docs/evidence.md.
 */
import type { merkle } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const sizeParams = z.object({
  tree_size: z.coerce.number({ error: 'tree_size must be an integer' }).int('tree_size must be an integer').min(1, 'tree_size must be >= 1'),
});

export function presentCheckpoint(c: merkle.Checkpoint) {
  return {
    origin: c.origin,
    tree_size: c.treeSize,
    tree_index: c.treeIndex,
    merkle_root: c.merkleRoot,
    checkpoint: c.note,
    key_name: c.keyName,
    checkpoint_sha256: c.checkpointSha256,
    signed_at: c.signedAt,
    format: 'C2SP tlog-checkpoint in a C2SP signed note (Ed25519)',
  };
}

/** ?format=note (or Accept: text/plain) answers the signed note itself, as witnesses and note tools expect. */
const wantsNote = (q: unknown, accept: string | undefined) => q === 'note' || (accept ?? '').startsWith('text/plain');

export function evidenceRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/audit/checkpoints/latest', async (req, res) => {
    const c = await d.merkle.getCheckpoint({ tenantId: authOf(req).tenantId });
    if (wantsNote(req.query.format, req.headers.accept)) res.type('text/plain; charset=utf-8').send(c.note);
    else res.json(presentCheckpoint(c));
  });
  r.get('/audit/checkpoints/:tree_size', async (req, res) => {
    const { tree_size } = parseWith(sizeParams, req.params, 'path');
    const c = await d.merkle.getCheckpoint({ tenantId: authOf(req).tenantId, treeSize: tree_size });
    if (wantsNote(req.query.format, req.headers.accept)) res.type('text/plain; charset=utf-8').send(c.note);
    else res.json(presentCheckpoint(c));
  });
  r.get('/audit/verifier-key', async (req, res) => {
    const k = await d.merkle.getVerifierKey({ tenantId: authOf(req).tenantId });
    res.json({ vkey: k.vkey, key_name: k.keyName, origin: k.keyName, key_id: k.keyId, public_key: k.publicKey, algorithm: k.algorithm, custody: k.custody });
  });
  return r;
}

const ok = (description: string) => ({ description });
const secured = [{ ApiKey: [] }, { Bearer: [] }];
const format = { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'note'] }, description: 'note: the signed note as text/plain' };
addPaths({
  '/audit/checkpoints/latest': {
    get: {
      security: secured,
      summary: "The latest signed checkpoint of the caller's tenant (C2SP tlog-checkpoint, Ed25519 signed note)",
      parameters: [format],
      responses: { 200: ok('{origin, tree_size, tree_index, merkle_root, checkpoint (the signed note), key_name, checkpoint_sha256, signed_at}'), 404: ok('no tree head yet') },
    },
  },
  '/audit/checkpoints/{tree_size}': {
    get: {
      security: secured,
      summary: 'The signed checkpoint of the tree head of this size',
      parameters: [{ name: 'tree_size', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }, format],
      responses: { 200: ok('same body as /audit/checkpoints/latest'), 404: ok('no tree head of this size'), 422: ok('not an integer >= 1') },
    },
  },
  '/audit/verifier-key': {
    get: {
      security: secured,
      summary: "The verifier key of the tenant's checkpoints and erasure statements (name+keyhash+base64)",
      responses: { 200: ok('{vkey, key_name, origin, key_id, public_key, algorithm, custody}') },
    },
  },
});
