/**
 * HSM keys of data subjects (/hsm/*): create, list, status, encrypt and decrypt with a subject's key, and
 * the HSM section of GET /api/health. Bodies are documented in docs/vault.md.
 */
import { detectInString } from '@agw/pii';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths, jsonBody } from '../../openapi/openapi';
import { SUBJECT_ID_RULE, isSubjectId, orNull, subjectParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const createKeySchema = z
  .object({
    subject_id: z.string().refine(isSubjectId, SUBJECT_ID_RULE).optional(),
    identifier: z
      .string()
      .min(1)
      .max(1024)
      .refine((v) => detectInString(v).identifiers.length > 0, 'identifier must be personal data the gateway recognises: an e-mail address, a phone number with its country code (+…), an IBAN, a card number, an SSN or an IP address')
      .optional(),
  })
  .refine((b) => !!b.subject_id !== !!b.identifier, { message: 'send exactly one of subject_id or identifier', path: ['subject_id'] });

const encryptSchema = z.object({
  subject_id: z.string().refine(isSubjectId, SUBJECT_ID_RULE),
  plaintext: z.unknown().refine((v) => v !== undefined, { message: 'Field required' }),
  kind: z.string().max(64).optional(),
});

const decryptSchema = z.object({ envelope: z.record(z.string(), z.unknown()) });

export function hsmRoutes(d: GatewayDeps): Router {
  const r = Router();
  // GET /api/health: the vault's key backend (PKCS#11 token or Vault Transit)
  d.health.addSection('hsm', async () => {
    const h = await d.vault.getHsmStatus({}, { deadlineMs: d.config.probeDeadlineMs });
    return { status: h.ready ? 'ok' : 'error', backend: h.backend, token_label: h.tokenLabel };
  });
  r.post('/hsm/keys', async (req, res) => {
    const b = parseWith(createKeySchema, req.body ?? {}, 'body');
    const k = await d.vault.createKey({ tenantId: authOf(req).tenantId, subjectId: b.subject_id ?? '', identifier: b.identifier ?? '' });
    res.status(k.created ? 201 : 200).json({
      subject_id: k.subjectId,
      key_id: k.keyId,
      algorithm: k.algorithm,
      backend: k.backend,
      status: k.status,
      created: k.created,
      created_at: k.createdAt,
    });
  });
  r.get('/hsm/keys', async (req, res) => {
    const { keys } = await d.vault.listKeys({ tenantId: authOf(req).tenantId });
    res.json({
      keys: keys.map((k) => ({
        key_id: k.keyId,
        purpose: k.purpose,
        subject_id: orNull(k.subjectId),
        algorithm: k.algorithm,
        backend: k.backend,
        status: k.status,
        created_at: k.createdAt,
        destroyed_at: orNull(k.destroyedAt),
      })),
      count: keys.length,
    });
  });
  r.get('/hsm/keys/:subject_id/status', async (req, res) => {
    const s = await d.vault.getSubjectStatus({ tenantId: authOf(req).tenantId, subjectId: subjectParam(req.params.subject_id) });
    res.json({ subject_id: s.subjectId, key_id: s.keyId, key_exists: s.keyExists, status: s.status, erased: s.erased, created_at: s.createdAt, erased_at: orNull(s.erasedAt) });
  });
  r.post('/hsm/encrypt', async (req, res) => {
    const b = parseWith(encryptSchema, req.body, 'body');
    const e = await d.vault.encrypt({ tenantId: authOf(req).tenantId, subjectId: b.subject_id, plaintextJson: JSON.stringify(b.plaintext) });
    res.json({ subject_id: e.subjectId, envelope: JSON.parse(e.envelopeJson) });
  });
  r.post('/hsm/decrypt', async (req, res) => {
    const b = parseWith(decryptSchema, req.body, 'body');
    const p = await d.vault.decrypt({ tenantId: authOf(req).tenantId, envelopeJson: JSON.stringify(b.envelope) });
    res.json({ subject_id: p.subjectId, plaintext: JSON.parse(p.plaintextJson) });
  });
  return r;
}

const p = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
addPaths({
  '/hsm/keys': {
    post: { requestBody: jsonBody(createKeySchema), responses: { 201: { description: 'created {subject_id, key_id, algorithm, backend, status, created}' }, 200: { description: 'existed' }, 409: { description: 'subject erased' } } },
    get: { responses: { 200: { description: '{keys: [{key_id, purpose, subject_id, algorithm, backend, status, created_at, destroyed_at}]}' } } },
  },
  '/hsm/keys/{subject_id}/status': { get: { parameters: [p('subject_id')], responses: { 200: { description: '{subject_id, key_id, key_exists, status, erased}' }, 404: { description: 'unknown subject' } } } },
  '/hsm/encrypt': { post: { requestBody: jsonBody(encryptSchema), responses: { 200: { description: '{subject_id, envelope: {"$pii": {...}}}' }, 409: { description: 'subject erased' } } } },
  '/hsm/decrypt': { post: { requestBody: jsonBody(decryptSchema), responses: { 200: { description: '{subject_id, plaintext}' }, 409: { description: 'subject erased' }, 422: { description: 'envelope invalid' } } } },
});
