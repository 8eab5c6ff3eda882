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
import { addPaths, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const sizeParams = z.object({
  tree_size: z.coerce.number({ error: 'tree_size must be an integer' }).int('tree_size must be an integer').min(1, 'tree_size must be >= 1'),
});

export const checkpointSchema = z
  .object({
    origin: z.string(),
    tree_size: z.number().int(),
    tree_index: z.number().int(),
    merkle_root: z.string(),
    checkpoint: z.string().meta({ description: 'the signed note' }),
    key_name: z.string(),
    checkpoint_sha256: z.string(),
    signed_at: timestamp(),
    format: z.string(),
    cosigned_checkpoint: z.string().meta({ description: 'the signed note followed by the witnesses\' C2SP tlog-cosignature lines (docs/evidence.md, "Witnesses")' }),
    cosignatures: z.array(z.object({ witness: z.string(), cosigned_at: timestamp() })),
  })
  .meta({ id: 'Checkpoint', description: 'A signed tree head: C2SP tlog-checkpoint in a C2SP signed note (Ed25519)' });
const verifierKeyResponse = z.object({ vkey: z.string(), key_name: z.string(), origin: z.string(), key_id: z.string(), public_key: z.string(), algorithm: z.string(), custody: z.string() });

export function presentCheckpoint(c: merkle.Checkpoint): z.infer<typeof checkpointSchema> {
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
    cosigned_checkpoint: c.cosignedNote || c.note,
    cosignatures: c.cosignatures.map((x) => ({ witness: x.witness, cosigned_at: x.cosignedAt })),
  };
}

const formatQuery = z.object({ format: z.enum(['json', 'note'], { error: "format must be 'json' or 'note'" }).optional() });

/**
 * ?format=note (or Accept: text/plain) answers the signed note itself, as witnesses and note tools expect.
 * The query is checked before the checkpoint is looked up (a bad format is a 422, whether a head exists or not).
 */
function wantsNote(query: unknown, accept: string | undefined): boolean {
  const { format } = parseWith(formatQuery, { format: (query as { format?: unknown }).format }, 'query');
  return format === 'note' || (format === undefined && (accept ?? '').startsWith('text/plain'));
}

export function evidenceRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/audit/checkpoints/latest', async (req, res) => {
    const note = wantsNote(req.query, req.headers.accept);
    const c = await d.merkle.getCheckpoint({ tenantId: authOf(req).tenantId });
    if (note) res.type('text/plain; charset=utf-8').send(c.cosignedNote || c.note);
    else reply(res, checkpointSchema, presentCheckpoint(c));
  });
  r.get('/audit/checkpoints/:tree_size', async (req, res) => {
    const { tree_size } = parseWith(sizeParams, req.params, 'path');
    const note = wantsNote(req.query, req.headers.accept);
    const c = await d.merkle.getCheckpoint({ tenantId: authOf(req).tenantId, treeSize: tree_size });
    if (note) res.type('text/plain; charset=utf-8').send(c.cosignedNote || c.note);
    else reply(res, checkpointSchema, presentCheckpoint(c));
  });
  r.get('/audit/verifier-key', async (req, res) => {
    const k = await d.merkle.getVerifierKey({ tenantId: authOf(req).tenantId });
    reply(res, verifierKeyResponse, { vkey: k.vkey, key_name: k.keyName, origin: k.keyName, key_id: k.keyId, public_key: k.publicKey, algorithm: k.algorithm, custody: k.custody });
  });
  return r;
}

const format = { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'note'] }, description: 'note (or Accept: text/plain): the signed note with its witnesses\' cosignature lines, as text/plain' };
const checkpointContent = (d: string) => ({ description: d, content: { ...response(d, checkpointSchema).content, 'text/plain': { schema: { type: 'string' } } } });
addPaths({
  '/audit/checkpoints/latest': {
    get: {
      summary: "The latest signed checkpoint of the caller's tenant (C2SP tlog-checkpoint, Ed25519 signed note)",
      parameters: [format],
      responses: { 200: checkpointContent('the checkpoint (JSON) or the signed note (text/plain)'), 404: errors[404]('no tree head yet') },
    },
  },
  '/audit/checkpoints/{tree_size}': {
    get: {
      summary: 'The signed checkpoint of the tree head of this size',
      parameters: [pathParam('tree_size', { type: 'integer', minimum: 1 }), format],
      responses: { 200: checkpointContent('the checkpoint (JSON) or the signed note (text/plain)'), 404: errors[404]('no tree head of this size'), 422: errors[422]('not an integer >= 1') },
    },
  },
  '/audit/verifier-key': {
    get: { summary: "The verifier key of the tenant's checkpoints and erasure statements (name+keyhash+base64)", responses: { 200: response('the key', verifierKeyResponse) } },
  },
});
