/**
 * Credentials vault, HSM keys and PII erasure: /credentials/*, /hsm/*, /audit/subjects, /audit/erase/*.
 * Thin: validate, call the vault service over gRPC, present. Credential values go in and never come
 * back out; bodies of the /hsm/* endpoints are documented in docs/vault.md.
 */
import { InputError, NotFoundError } from '@agw/shared';
import { detectInString } from '@agw/pii';
import type { vault as pb } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
import { eraseSubject } from '../../vault/subject-erasure';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

/** Tool ids and credential names in a path: 1-256 characters, as when they are registered. */
function pathName(value: string, field: string): string {
  if (value.length > 256) throw InputError.at(['path', field], `${field} is at most 256 characters`, 'string_too_long');
  return value;
}

const SUBJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const registerCredentialSchema = z.object({
  tool_id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  value: z.string().min(1).max(8192),
  credential_type: z.enum(['bearer', 'api_key', 'basic']).optional(),
  upstream_url: z.string().min(1).max(2048).optional(),
  upstream_method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
  header_name: z.string().min(1).max(128).optional(),
});

const accessLogQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  tool_id: z.string().min(1).max(256).optional(),
});

const createKeySchema = z
  .object({
    subject_id: z.string().regex(SUBJECT_ID, 'subject_id must be 1-128 characters of A-Z a-z 0-9 . _ : -').optional(),
    identifier: z
      .string()
      .min(1)
      .max(1024)
      .refine((v) => detectInString(v).identifiers.length > 0, 'identifier must be personal data the gateway recognises: an e-mail address, a phone number with its country code (+…), an IBAN, a card number, an SSN or an IP address')
      .optional(),
  })
  .refine((b) => !!b.subject_id !== !!b.identifier, { message: 'send exactly one of subject_id or identifier', path: ['subject_id'] });

const encryptSchema = z.object({
  subject_id: z.string().regex(SUBJECT_ID, 'subject_id must be 1-128 characters of A-Z a-z 0-9 . _ : -'),
  plaintext: z.unknown().refine((v) => v !== undefined, { message: 'Field required' }),
  kind: z.string().max(64).optional(),
});

const decryptSchema = z.object({ envelope: z.record(z.string(), z.unknown()) });
const lookupSchema = z.object({ identifier: z.string().min(1).max(1024), kind: z.enum(['email', 'phone', 'ssn', 'iban', 'card', 'ip', 'value']).optional() });

function subjectParam(v: string | undefined): string {
  if (!v || !SUBJECT_ID.test(v)) throw new NotFoundError('Subject not found');
  return v;
}

const or = (s: string) => s || null;

function presentCredential(c: pb.Credential) {
  return {
    tool_id: c.toolId,
    name: c.name,
    credential_type: c.credentialType,
    upstream_url: or(c.upstreamUrl),
    upstream_method: c.upstreamMethod,
    header_name: or(c.headerName),
    registered_at: c.registeredAt,
  };
}

function presentSubject(s: pb.Subject) {
  return {
    subject_id: s.subjectId,
    status: s.status,
    source: s.source,
    pii_kinds: s.piiKinds,
    action_count: s.actionCount,
    key_id: or(s.keyId),
    created_at: or(s.createdAt),
    erased_at: or(s.erasedAt),
  };
}

export function credentialRoutes(d: GatewayDeps): Router {
  const r = Router();
  // GET /api/health: the vault's key backend (PKCS#11 token or Vault Transit)
  d.health.addSection('hsm', async () => {
    const h = await d.vault.getHsmStatus({}, { deadlineMs: d.config.probeDeadlineMs });
    return { status: h.ready ? 'ok' : 'error', backend: h.backend, token_label: h.tokenLabel };
  });
  const tenantOf = (req: Parameters<typeof authOf>[0]) => authOf(req).tenantId;

  r.post('/credentials/register', async (req, res) => {
    const b = parseWith(registerCredentialSchema, req.body, 'body');
    const c = await d.vault.registerCredential({
      tenantId: tenantOf(req),
      toolId: b.tool_id,
      name: b.name,
      value: b.value,
      credentialType: b.credential_type ?? '',
      upstreamUrl: b.upstream_url ?? '',
      upstreamMethod: b.upstream_method ?? '',
      headerName: b.header_name ?? '',
    });
    res.status(201).json({ status: 'registered', ...presentCredential(c), message: 'The value is encrypted by an HSM key and cannot be read back.' });
  });
  r.get('/credentials', async (req, res) => {
    const { credentials } = await d.vault.listCredentials({ tenantId: tenantOf(req) });
    res.json({ credentials: credentials.map(presentCredential), count: credentials.length });
  });
  r.get('/credentials/access-log', async (req, res) => {
    const q = parseWith(accessLogQuery, { limit: req.query.limit, tool_id: req.query.tool_id }, 'query');
    const { entries } = await d.vault.listAccessLog({ tenantId: tenantOf(req), limit: q.limit, toolId: q.tool_id ?? '' });
    res.json({
      entries: entries.map((e) => ({
        id: e.id,
        at: e.at,
        agent_id: e.agentId,
        tool_id: e.toolId,
        credential_name: e.credentialName,
        action_id: or(e.actionId),
        origin: e.origin,
        outcome: e.outcome,
        status_code: e.statusCode || null,
        hsm_fetch_ms: e.hsmFetchMs,
        execution_ms: e.executionMs,
        error: or(e.error),
      })),
      count: entries.length,
    });
  });
  r.get('/credentials/:tool_id/status', async (req, res) => {
    const s = await d.vault.getCredentialStatus({ tenantId: tenantOf(req), toolId: pathName(req.params.tool_id, 'tool_id') });
    res.json({ tool_id: s.toolId, registered: s.registered, name: or(s.name), credential_type: or(s.credentialType), registered_at: or(s.registeredAt) });
  });
  r.delete('/credentials/:tool_id/:name', async (req, res) => {
    const c = await d.vault.deleteCredential({ tenantId: tenantOf(req), toolId: pathName(req.params.tool_id, 'tool_id'), name: pathName(req.params.name, 'name') });
    res.json({ status: 'deleted', tool_id: c.toolId, name: c.name });
  });

  r.post('/hsm/keys', async (req, res) => {
    const b = parseWith(createKeySchema, req.body ?? {}, 'body');
    const k = await d.vault.createKey({ tenantId: tenantOf(req), subjectId: b.subject_id ?? '', identifier: b.identifier ?? '' });
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
    const { keys } = await d.vault.listKeys({ tenantId: tenantOf(req) });
    res.json({
      keys: keys.map((k) => ({
        key_id: k.keyId,
        purpose: k.purpose,
        subject_id: or(k.subjectId),
        algorithm: k.algorithm,
        backend: k.backend,
        status: k.status,
        created_at: k.createdAt,
        destroyed_at: or(k.destroyedAt),
      })),
      count: keys.length,
    });
  });
  r.get('/hsm/keys/:subject_id/status', async (req, res) => {
    const s = await d.vault.getSubjectStatus({ tenantId: tenantOf(req), subjectId: subjectParam(req.params.subject_id) });
    res.json({ subject_id: s.subjectId, key_id: s.keyId, key_exists: s.keyExists, status: s.status, erased: s.erased, created_at: s.createdAt, erased_at: or(s.erasedAt) });
  });
  r.post('/hsm/encrypt', async (req, res) => {
    const b = parseWith(encryptSchema, req.body, 'body');
    const e = await d.vault.encrypt({ tenantId: tenantOf(req), subjectId: b.subject_id, plaintextJson: JSON.stringify(b.plaintext) });
    res.json({ subject_id: e.subjectId, envelope: JSON.parse(e.envelopeJson) });
  });
  r.post('/hsm/decrypt', async (req, res) => {
    const b = parseWith(decryptSchema, req.body, 'body');
    const p = await d.vault.decrypt({ tenantId: tenantOf(req), envelopeJson: JSON.stringify(b.envelope) });
    res.json({ subject_id: p.subjectId, plaintext: JSON.parse(p.plaintextJson) });
  });

  r.get('/audit/subjects', async (req, res) => {
    const { subjects } = await d.vault.listSubjects({ tenantId: tenantOf(req) });
    res.json({ subjects: subjects.map(presentSubject), count: subjects.length });
  });
  r.post('/audit/subjects/lookup', async (req, res) => {
    const b = parseWith(lookupSchema, req.body, 'body');
    const s = await d.vault.lookupSubject({ tenantId: tenantOf(req), identifier: b.identifier, kind: b.kind ?? '' });
    res.json({ ...presentSubject(s), known: s.status !== 'unknown' });
  });
  r.post('/audit/erase/:subject_id', async (req, res) => {
    const out = await eraseSubject(d.vault, d.audit, tenantOf(req), subjectParam(req.params.subject_id));
    res.json(out);
  });
  r.get('/audit/erase/:subject_id/verify', async (req, res) => {
    const s = await d.vault.getSubjectStatus({ tenantId: tenantOf(req), subjectId: subjectParam(req.params.subject_id) });
    res.json({ erased: s.erased, key_exists: s.keyExists, subject_id: s.subjectId, erased_at: or(s.erasedAt) });
  });
  return r;
}

const p = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const jsonBody = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } } });
addPaths({
  '/credentials/register': {
    post: {
      summary: 'Register a tool credential (value sealed by an HSM key, never returned); calls to the tool are then brokered to upstream_url',
      requestBody: jsonBody(registerCredentialSchema),
      responses: { 201: { description: '{status: registered, tool_id, name, credential_type, upstream_url, upstream_method, header_name, registered_at}' }, 422: { description: 'invalid' } },
    },
  },
  '/credentials': { get: { responses: { 200: { description: '{credentials: [credential metadata]}' } } } },
  '/credentials/access-log': {
    get: {
      parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } }, { name: 'tool_id', in: 'query', schema: { type: 'string' } }],
      responses: { 200: { description: '{entries: [{id, at, agent_id, tool_id, credential_name, action_id, origin, outcome, status_code, hsm_fetch_ms, execution_ms, error}]}' } },
    },
  },
  '/credentials/{tool_id}/status': { get: { parameters: [p('tool_id')], responses: { 200: { description: '{tool_id, registered, name}' } } } },
  '/credentials/{tool_id}/{name}': { delete: { parameters: [p('tool_id'), p('name')], responses: { 200: { description: '{status: deleted, tool_id, name}' }, 404: { description: 'not found' } } } },
  '/hsm/keys': {
    post: { requestBody: jsonBody(createKeySchema), responses: { 201: { description: 'created {subject_id, key_id, algorithm, backend, status, created}' }, 200: { description: 'existed' }, 409: { description: 'subject erased' } } },
    get: { responses: { 200: { description: '{keys: [{key_id, purpose, subject_id, algorithm, backend, status, created_at, destroyed_at}]}' } } },
  },
  '/hsm/keys/{subject_id}/status': { get: { parameters: [p('subject_id')], responses: { 200: { description: '{subject_id, key_id, key_exists, status, erased}' }, 404: { description: 'unknown subject' } } } },
  '/hsm/encrypt': { post: { requestBody: jsonBody(encryptSchema), responses: { 200: { description: '{subject_id, envelope: {"$pii": {...}}}' }, 409: { description: 'subject erased' } } } },
  '/hsm/decrypt': { post: { requestBody: jsonBody(decryptSchema), responses: { 200: { description: '{subject_id, plaintext}' }, 409: { description: 'subject erased' }, 422: { description: 'envelope invalid' } } } },
  '/audit/subjects': { get: { responses: { 200: { description: '{subjects: [{subject_id, status, source, pii_kinds, action_count, created_at, erased_at}]}' } } } },
  '/audit/subjects/lookup': { post: { requestBody: jsonBody(lookupSchema), responses: { 200: { description: 'the subject id an identifier maps to' } } } },
  '/audit/erase/{subject_id}': { post: { parameters: [p('subject_id')], responses: { 200: { description: '{status: erased, subject_id, records_affected}' }, 404: { description: 'unknown subject' } } } },
  '/audit/erase/{subject_id}/verify': { get: { parameters: [p('subject_id')], responses: { 200: { description: '{erased, key_exists}' }, 404: { description: 'unknown subject' } } } },
});
