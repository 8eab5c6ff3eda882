/**
 * Evidence anyone can check offline (/audit/checkpoints*, /audit/verifier-key): the caller's tenant's
 * signed checkpoints (C2SP tlog-checkpoint in a C2SP signed note, Ed25519 key held by the vault's HSM)
 * and the verifier key in the standard `name+keyhash+base64` form. Answered by the audit service (which
 * asks the vault); walk-through in docs/evidence.md.
 */
import type { merkle } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { AuditFeature } from '../../features/audit.feature';
import { addPaths, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { InputError } from '@agw/shared';
import { RECEIPT_HEADER, receiptHeader } from '../../pipeline/call-receipt';
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
    tree_size: c.tree_size,
    tree_index: c.tree_index,
    merkle_root: c.merkle_root,
    checkpoint: c.note,
    key_name: c.key_name,
    checkpoint_sha256: c.checkpoint_sha256,
    signed_at: c.signed_at,
    format: 'C2SP tlog-checkpoint in a C2SP signed note (Ed25519)',
    cosigned_checkpoint: c.cosigned_note || c.note,
    cosignatures: c.cosignatures.map((x) => ({ witness: x.witness, cosigned_at: x.cosigned_at })),
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

const recordIdParams = z.object({
  record_id: z.coerce.number({ error: 'record_id must be an integer' }).int('record_id must be an integer').min(1, 'record_id must be >= 1'),
});
const proofQuery = z
  .object({
    record_id: z.coerce.number({ error: 'record_id must be an integer' }).int('record_id must be an integer').min(1, 'record_id must be >= 1').optional(),
    receipt: z.string().max(8192).optional().meta({ description: 'the receipt note, base64url (the AGW-Receipt header)' }),
  })
  .refine((q) => (q.record_id === undefined) !== (q.receipt === undefined), { message: 'give exactly one of record_id and receipt' });

export const receiptResponse = z
  .object({ note: z.string(), key: z.string(), record_id: z.number().int() })
  .meta({ id: 'StoredReceipt', description: 'the receipt of a stored record, issued again: the receipt note (agw-receipt/v1) and its key delegation (agw-receipt-key/v1)' });
export const receiptProofSchema = z
  .object({
    status: z.enum(['merged', 'pending']),
    record_id: z.number().int(),
    leaf_index: z.number().int(),
    leaf_hash: z.string(),
    record_hash: z.string(),
    tree_size: z.number().int().optional(),
    proof: z.array(z.string()).optional().meta({ description: 'RFC 9162 inclusion proof, hex, leaf side first' }),
    checkpoint: z.string().optional().meta({ description: 'the first signed checkpoint that contains the leaf' }),
    merge_by: timestamp().meta({ description: "the record's time plus the maximum merge delay" }),
    max_merge_delay_seconds: z.number().int(),
  })
  .meta({ id: 'ReceiptProof' });

/** The record id a receipt names (its `record` line), from the note as base64url or text. */
function recordIdOfReceipt(receipt: string): number {
  const text = receipt.includes('\n') ? receipt : Buffer.from(receipt, 'base64url').toString('utf8');
  const lines = text.split('\n');
  const m = lines[0] === 'agw-receipt/v1' ? /^record ([1-9][0-9]*)$/m.exec(text) : null;
  if (!m) throw InputError.at(['query', 'receipt'], 'receipt must be a receipt note (agw-receipt/v1), base64url as in the AGW-Receipt header', 'value_error');
  return Number(m[1]);
}

export function evidenceRoutes(d: Pick<AuditFeature, 'audit' | 'merkle'>): Router {
  const r = Router();
  r.get('/audit/receipts/:record_id', async (req, res) => {
    const { record_id } = parseWith(recordIdParams, req.params, 'path');
    const receipt = await d.audit.getReceipt({ tenant_id: authOf(req).tenantId, record_id: record_id });
    res.setHeader(RECEIPT_HEADER, receiptHeader(receipt));
    reply(res, receiptResponse, { note: receipt.note, key: receipt.key, record_id });
  });
  r.get('/audit/proof', async (req, res) => {
    const q = parseWith(proofQuery, req.query, 'query');
    const recordId = q.record_id ?? recordIdOfReceipt(q.receipt!);
    const p = await d.audit.getReceiptProof({ tenant_id: authOf(req).tenantId, record_id: recordId });
    const body = {
      status: p.status === 'merged' ? ('merged' as const) : ('pending' as const),
      record_id: Number(p.record_id),
      leaf_index: Number(p.leaf_index),
      leaf_hash: p.leaf_hash,
      record_hash: p.record_hash,
      ...(p.status === 'merged' ? { tree_size: Number(p.tree_size), proof: p.proof, checkpoint: p.checkpoint } : {}),
      merge_by: p.merge_by,
      max_merge_delay_seconds: Number(p.max_merge_delay_seconds),
    };
    reply(res, receiptProofSchema, body, p.status === 'merged' ? 200 : 202);
  });
  r.get('/audit/checkpoints/latest', async (req, res) => {
    const note = wantsNote(req.query, req.headers.accept);
    const c = await d.merkle.getCheckpoint({ tenant_id: authOf(req).tenantId });
    if (note) res.type('text/plain; charset=utf-8').send(c.cosigned_note || c.note);
    else reply(res, checkpointSchema, presentCheckpoint(c));
  });
  r.get('/audit/checkpoints/:tree_size', async (req, res) => {
    const { tree_size } = parseWith(sizeParams, req.params, 'path');
    const note = wantsNote(req.query, req.headers.accept);
    const c = await d.merkle.getCheckpoint({ tenant_id: authOf(req).tenantId, tree_size: tree_size });
    if (note) res.type('text/plain; charset=utf-8').send(c.cosigned_note || c.note);
    else reply(res, checkpointSchema, presentCheckpoint(c));
  });
  r.get('/audit/verifier-key', async (req, res) => {
    const k = await d.merkle.getVerifierKey({ tenant_id: authOf(req).tenantId });
    reply(res, verifierKeyResponse, { vkey: k.vkey, key_name: k.key_name, origin: k.key_name, key_id: k.key_id, public_key: k.public_key, algorithm: k.algorithm, custody: k.custody });
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
  '/audit/receipts/{record_id}': {
    get: {
      summary: "The receipt of one of the tenant's audit records, issued again from the stored record (also as the AGW-Receipt header)",
      parameters: [pathParam('record_id', { type: 'integer', minimum: 1 })],
      responses: { 200: response('the receipt', receiptResponse), 404: errors[404]('no such record (another tenant\'s id included)'), 422: errors[422]('not an integer >= 1'), 503: errors[503]('the vault cannot delegate the receipt key now') },
    },
  },
  '/audit/proof': {
    get: {
      summary: 'From a receipt to its proof: the inclusion proof of the record up to the first signed checkpoint that contains it, and that checkpoint',
      parameters: [
        { name: 'record_id', in: 'query', required: false, schema: { type: 'integer', minimum: 1 }, description: "the tenant's record id" },
        { name: 'receipt', in: 'query', required: false, schema: { type: 'string' }, description: 'or the receipt note, base64url (the AGW-Receipt header)' },
      ],
      responses: {
        200: response('merged: the proof and the checkpoint', receiptProofSchema),
        202: response('pending: no signed checkpoint contains the record yet; merge_by says until when it must', receiptProofSchema),
        404: errors[404]('no such record (another tenant\'s id included)'),
        422: errors[422]('neither or both of record_id and receipt, or not a receipt'),
      },
    },
  },
  '/audit/verifier-key': {
    get: { summary: "The verifier key of the tenant's checkpoints and erasure statements (name+keyhash+base64)", responses: { 200: response('the key', verifierKeyResponse) } },
  },
});
