/**
 * Data subjects of personal data and their erasure (/audit/subjects, /audit/erase/*): list, look up an
 * identifier, crypto-shred a subject's key (the chain stays valid: it hashes ciphertext), verify.
 */
import type { vault as pb } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { CredentialsFeature } from '../../features/credentials.feature';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { eraseSubject } from '../../vault/subject-erasure';
import { orNull, subjectParam } from '../params';
import { pick } from '../present';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const lookupSchema = z.object({ identifier: z.string().min(1).max(1024), kind: z.enum(['email', 'phone', 'ssn', 'iban', 'card', 'ip', 'value']).optional() });

const subjectSchema = z
  .object({
    subject_id: z.string(),
    status: z.string(),
    source: z.string(),
    pii_kinds: z.array(z.string()),
    action_count: z.number().int(),
    key_id: z.string().nullable(),
    created_at: timestamp().nullable(),
    erased_at: timestamp().nullable(),
  })
  .meta({ id: 'Subject', description: 'A data subject of personal data in the audit log' });
const subjectsResponse = z.object({ subjects: z.array(subjectSchema), count: z.number().int() });
const lookupResponse = subjectSchema.extend({ known: z.boolean() });
const erasedResponse = z.object({
  status: z.literal('erased'),
  subject_id: z.string(),
  records_affected: z.number().int(),
  already_erased: z.boolean(),
  erased_at: timestamp(),
  erasure_record: z.object({ id: z.number().int(), action_id: z.string(), leaf_index: z.number().int(), record_hash: z.string(), prev_hash: z.string() }),
  signed_statement: z.string(),
  key_handle: z.string(),
  verifier_key: z.string(),
});
const erasureVerifyResponse = z.object({ erased: z.boolean(), key_exists: z.boolean(), subject_id: z.string(), erased_at: timestamp().nullable() });

function presentSubject(s: pb.Subject): z.infer<typeof subjectSchema> {
  return {
    ...pick(s, ['subject_id', 'status', 'source', 'pii_kinds', 'action_count']),
    key_id: orNull(s.key_id),
    created_at: orNull(s.created_at),
    erased_at: orNull(s.erased_at),
  };
}

export function subjectRoutes(d: Pick<CredentialsFeature, 'vault' | 'audit'>): Router {
  const r = Router();
  r.get('/audit/subjects', async (req, res) => {
    const { subjects } = await d.vault.listSubjects({ tenant_id: authOf(req).tenantId });
    reply(res, subjectsResponse, { subjects: subjects.map(presentSubject), count: subjects.length });
  });
  r.post('/audit/subjects/lookup', async (req, res) => {
    const b = parseWith(lookupSchema, req.body, 'body');
    const s = await d.vault.lookupSubject({ tenant_id: authOf(req).tenantId, identifier: b.identifier, kind: b.kind ?? '' });
    reply(res, lookupResponse, { ...presentSubject(s), known: s.status !== 'unknown' });
  });
  r.post('/audit/erase/:subject_id', async (req, res) => {
    const out = await eraseSubject(d.vault, d.audit, authOf(req).tenantId, subjectParam(req.params.subject_id));
    reply(res, erasedResponse, out);
  });
  r.get('/audit/erase/:subject_id/verify', async (req, res) => {
    const s = await d.vault.getSubjectStatus({ tenant_id: authOf(req).tenantId, subject_id: subjectParam(req.params.subject_id) });
    reply(res, erasureVerifyResponse, { erased: s.erased, key_exists: s.key_exists, subject_id: s.subject_id, erased_at: orNull(s.erased_at) });
  });
  return r;
}

addPaths({
  '/audit/subjects': { get: { summary: 'Data subjects with encrypted personal data in the log', responses: { 200: response('subjects', subjectsResponse) } } },
  '/audit/subjects/lookup': { post: { summary: 'The subject id an identifier maps to', requestBody: jsonBody(lookupSchema), responses: { 200: response('the subject (known: false when never seen)', lookupResponse), 422: errors[422]() } } },
  '/audit/erase/{subject_id}': {
    post: { summary: 'Crypto-shred a subject (its HSM key is destroyed; the chain stays valid)', parameters: [pathParam('subject_id')], responses: { 200: response('erased, with a signed statement', erasedResponse), 404: errors[404]('unknown subject') } },
  },
  '/audit/erase/{subject_id}/verify': { get: { parameters: [pathParam('subject_id')], responses: { 200: response('erasure status', erasureVerifyResponse), 404: errors[404]('unknown subject') } } },
});
