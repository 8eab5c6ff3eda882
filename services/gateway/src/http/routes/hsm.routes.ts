/**
 * HSM keys of data subjects (/hsm/*): create, list, status, encrypt and decrypt with a subject's key, and
 * the HSM section of GET /api/health. Bodies are documented in docs/vault.md.
 */
import { detectInString } from '@agw/pii';
import { AppError, decryptRequest, envelopeOfEncryptResponse, fromAnswerJson, jsonField, jsonOf, piiEnvelopeJson, requirePiiEnvelope } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { CredentialsFeature } from '../../features/credentials.feature';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { SUBJECT_ID_RULE, isSubjectId, orNull, subjectParam } from '../params';
import { pick } from '../present';
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

const keyResponse = z.object({ subject_id: z.string(), key_id: z.string(), algorithm: z.string(), backend: z.string(), status: z.string(), created: z.boolean(), created_at: timestamp() });
const keysResponse = z.object({
  keys: z.array(
    z.object({ key_id: z.string(), purpose: z.string(), subject_id: z.string().nullable(), algorithm: z.string(), backend: z.string(), status: z.string(), created_at: timestamp(), destroyed_at: timestamp().nullable() }),
  ),
  count: z.number().int(),
});
const subjectKeyResponse = z.object({ subject_id: z.string(), key_id: z.string(), key_exists: z.boolean(), status: z.string(), erased: z.boolean(), created_at: z.string(), erased_at: timestamp().nullable() });
const envelopeSchema = z.record(z.string(), z.unknown()).meta({ id: 'PiiEnvelope', description: 'Encrypted personal data: {"$pii": {v, subject, kid, kind, alg, iv, ct, tag}} (docs/vault.md, "PII envelopes")' });
const encryptResponse = z.object({ subject_id: z.string(), envelope: envelopeSchema });
const decryptResponse = z.object({ subject_id: z.string(), plaintext: z.unknown().optional() });

export function hsmRoutes(d: Pick<CredentialsFeature, 'vault' | 'health'>): Router {
  const r = Router();
  // GET /api/health: the vault's key backend (PKCS#11 token or Vault Transit)
  d.health.addSection('hsm', async () => {
    const h = await d.vault.getHsmStatus({});
    return { status: h.ready ? 'ok' : 'error', backend: h.backend, token_label: h.token_label };
  });
  r.post('/hsm/keys', async (req, res) => {
    const b = parseWith(createKeySchema, req.body ?? {}, 'body');
    const k = await d.vault.createKey({ tenant_id: authOf(req).tenantId, subject_id: b.subject_id ?? '', identifier: b.identifier ?? '' });
    reply(
      res,
      keyResponse,
      pick(k, ['subject_id', 'key_id', 'algorithm', 'backend', 'status', 'created', 'created_at']),
      k.created ? 201 : 200,
    );
  });
  r.get('/hsm/keys', async (req, res) => {
    const { keys } = await d.vault.listKeys({ tenant_id: authOf(req).tenantId });
    reply(res, keysResponse, {
      keys: keys.map((k) => ({
        ...pick(k, ['key_id', 'purpose']),
        subject_id: orNull(k.subject_id),
        ...pick(k, ['algorithm', 'backend', 'status', 'created_at']),
        destroyed_at: orNull(k.destroyed_at),
      })),
      count: keys.length,
    });
  });
  r.get('/hsm/keys/:subject_id/status', async (req, res) => {
    const s = await d.vault.getSubjectStatus({ tenant_id: authOf(req).tenantId, subject_id: subjectParam(req.params.subject_id) });
    reply(res, subjectKeyResponse, { subject_id: s.subject_id, key_id: s.key_id, key_exists: s.key_exists, status: s.status, erased: s.erased, created_at: s.created_at, erased_at: orNull(s.erased_at) });
  });
  r.post('/hsm/encrypt', async (req, res) => {
    const b = parseWith(encryptSchema, req.body, 'body');
    const e = await d.vault.encrypt({ tenant_id: authOf(req).tenantId, subject_id: b.subject_id, ...jsonField('plaintext', b.plaintext) });
    reply(res, encryptResponse, { subject_id: e.subject_id, envelope: piiEnvelopeJson(envelopeOfEncryptResponse(e)) });
  });
  r.post('/hsm/decrypt', async (req, res) => {
    const b = parseWith(decryptSchema, req.body, 'body');
    const p = await d.vault.decrypt(decryptRequest(authOf(req).tenantId, requirePiiEnvelope(b.envelope)));
    reply(res, decryptResponse, { subject_id: p.subject_id, plaintext: fromAnswerJson(jsonOf(p, 'plaintext'), 'plaintext') });
  });
  return r;
}

const erased = errors[409]('subject erased (its key is destroyed)');
addPaths({
  '/hsm/keys': {
    post: { summary: 'Create (or return) the HSM key of a data subject', requestBody: jsonBody(createKeySchema), responses: { 201: response('created', keyResponse), 200: response('existed', keyResponse), 409: erased, 422: errors[422]() } },
    get: { summary: 'HSM keys of the tenant', responses: { 200: response('keys', keysResponse) } },
  },
  '/hsm/keys/{subject_id}/status': { get: { parameters: [pathParam('subject_id')], responses: { 200: response('status', subjectKeyResponse), 404: errors[404]('unknown subject') } } },
  '/hsm/encrypt': { post: { requestBody: jsonBody(encryptSchema), responses: { 200: response('the envelope', encryptResponse), 404: errors[404]('unknown subject'), 409: erased, 422: errors[422]() } } },
  '/hsm/decrypt': { post: { requestBody: jsonBody(decryptSchema), responses: { 200: response('the plaintext', decryptResponse), 409: erased, 422: errors[422]('envelope invalid') } } },
});
