/**
 * Data subjects of personal data and their erasure (/audit/subjects, /audit/erase/*): list, look up an
 * identifier, crypto-shred a subject's key (the chain stays valid: it hashes ciphertext), verify.
 */
import type { vault as pb } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths, jsonBody } from '../../openapi/openapi';
import { eraseSubject } from '../../vault/subject-erasure';
import { orNull, subjectParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const lookupSchema = z.object({ identifier: z.string().min(1).max(1024), kind: z.enum(['email', 'phone', 'ssn', 'iban', 'card', 'ip', 'value']).optional() });

function presentSubject(s: pb.Subject) {
  return {
    subject_id: s.subjectId,
    status: s.status,
    source: s.source,
    pii_kinds: s.piiKinds,
    action_count: s.actionCount,
    key_id: orNull(s.keyId),
    created_at: orNull(s.createdAt),
    erased_at: orNull(s.erasedAt),
  };
}

export function subjectRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.get('/audit/subjects', async (req, res) => {
    const { subjects } = await d.vault.listSubjects({ tenantId: authOf(req).tenantId });
    res.json({ subjects: subjects.map(presentSubject), count: subjects.length });
  });
  r.post('/audit/subjects/lookup', async (req, res) => {
    const b = parseWith(lookupSchema, req.body, 'body');
    const s = await d.vault.lookupSubject({ tenantId: authOf(req).tenantId, identifier: b.identifier, kind: b.kind ?? '' });
    res.json({ ...presentSubject(s), known: s.status !== 'unknown' });
  });
  r.post('/audit/erase/:subject_id', async (req, res) => {
    const out = await eraseSubject(d.vault, d.audit, authOf(req).tenantId, subjectParam(req.params.subject_id));
    res.json(out);
  });
  r.get('/audit/erase/:subject_id/verify', async (req, res) => {
    const s = await d.vault.getSubjectStatus({ tenantId: authOf(req).tenantId, subjectId: subjectParam(req.params.subject_id) });
    res.json({ erased: s.erased, key_exists: s.keyExists, subject_id: s.subjectId, erased_at: orNull(s.erasedAt) });
  });
  return r;
}

const p = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
addPaths({
  '/audit/subjects': { get: { responses: { 200: { description: '{subjects: [{subject_id, status, source, pii_kinds, action_count, created_at, erased_at}]}' } } } },
  '/audit/subjects/lookup': { post: { requestBody: jsonBody(lookupSchema), responses: { 200: { description: 'the subject id an identifier maps to' } } } },
  '/audit/erase/{subject_id}': { post: { parameters: [p('subject_id')], responses: { 200: { description: '{status: erased, subject_id, records_affected}' }, 404: { description: 'unknown subject' } } } },
  '/audit/erase/{subject_id}/verify': { get: { parameters: [p('subject_id')], responses: { 200: { description: '{erased, key_exists}' }, 404: { description: 'unknown subject' } } } },
});
