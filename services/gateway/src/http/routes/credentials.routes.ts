/**
 * Tool credentials (/credentials/*): register (the value is sealed by an HSM key in the vault service and
 * never comes back), list, status, delete, and the access log of brokered use. Thin: validate, call the
 * vault over gRPC, present.
 */
import type { vault as pb } from '@agw/proto';
import { Router } from 'express';
import { z } from 'zod';
import type { CredentialsFeature } from '../../features/credentials.feature';
import { addPaths, jsonBody, pathParam, queryParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { orNull, pathName } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

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

const credentialSchema = z
  .object({
    tool_id: z.string(),
    name: z.string(),
    credential_type: z.string(),
    upstream_url: z.string().nullable(),
    upstream_method: z.string(),
    header_name: z.string().nullable(),
    registered_at: timestamp(),
  })
  .meta({ id: 'Credential', description: 'Credential metadata (the value never comes back)' });
const registeredResponse = credentialSchema.extend({ status: z.literal('registered'), message: z.string() });
const listResponse = z.object({ credentials: z.array(credentialSchema), count: z.number().int() });
const accessLogResponse = z.object({
  entries: z.array(
    z.object({
      id: z.number().int(),
      at: timestamp(),
      agent_id: z.string(),
      tool_id: z.string(),
      credential_name: z.string(),
      action_id: z.string().nullable(),
      origin: z.string(),
      outcome: z.string(),
      status_code: z.number().int().nullable(),
      hsm_fetch_ms: z.number(),
      execution_ms: z.number(),
      error: z.string().nullable(),
    }),
  ),
  count: z.number().int(),
});
const statusResponse = z.object({ tool_id: z.string(), registered: z.boolean(), name: z.string().nullable(), credential_type: z.string().nullable(), registered_at: timestamp().nullable() });
const deletedResponse = z.object({ status: z.literal('deleted'), tool_id: z.string(), name: z.string() });

function presentCredential(c: pb.Credential): z.infer<typeof credentialSchema> {
  return {
    tool_id: c.tool_id,
    name: c.name,
    credential_type: c.credential_type,
    upstream_url: orNull(c.upstream_url),
    upstream_method: c.upstream_method,
    header_name: orNull(c.header_name),
    registered_at: c.registered_at,
  };
}

export function credentialRoutes(d: Pick<CredentialsFeature, 'vault'>): Router {
  const r = Router();
  r.post('/credentials/register', async (req, res) => {
    const b = parseWith(registerCredentialSchema, req.body, 'body');
    const c = await d.vault.registerCredential({
      tenant_id: authOf(req).tenantId,
      tool_id: b.tool_id,
      name: b.name,
      value: b.value,
      credential_type: b.credential_type ?? '',
      upstream_url: b.upstream_url ?? '',
      upstream_method: b.upstream_method ?? '',
      header_name: b.header_name ?? '',
    });
    reply(res, registeredResponse, { status: 'registered' as const, ...presentCredential(c), message: 'The value is encrypted by an HSM key and cannot be read back.' }, 201);
  });
  r.get('/credentials', async (req, res) => {
    const { credentials } = await d.vault.listCredentials({ tenant_id: authOf(req).tenantId });
    reply(res, listResponse, { credentials: credentials.map(presentCredential), count: credentials.length });
  });
  r.get('/credentials/access-log', async (req, res) => {
    const q = parseWith(accessLogQuery, { limit: req.query.limit, tool_id: req.query.tool_id }, 'query');
    const { entries } = await d.vault.listAccessLog({ tenant_id: authOf(req).tenantId, limit: q.limit, tool_id: q.tool_id ?? '' });
    reply(res, accessLogResponse, {
      entries: entries.map((e) => ({
        id: e.id,
        at: e.at,
        agent_id: e.agent_id,
        tool_id: e.tool_id,
        credential_name: e.credential_name,
        action_id: orNull(e.action_id),
        origin: e.origin,
        outcome: e.outcome,
        status_code: e.status_code || null,
        hsm_fetch_ms: e.hsm_fetch_ms,
        execution_ms: e.execution_ms,
        error: orNull(e.error),
      })),
      count: entries.length,
    });
  });
  r.get('/credentials/:tool_id/status', async (req, res) => {
    const s = await d.vault.getCredentialStatus({ tenant_id: authOf(req).tenantId, tool_id: pathName(req.params.tool_id, 'tool_id') });
    reply(res, statusResponse, { tool_id: s.tool_id, registered: s.registered, name: orNull(s.name), credential_type: orNull(s.credential_type), registered_at: orNull(s.registered_at) });
  });
  r.delete('/credentials/:tool_id/:name', async (req, res) => {
    const c = await d.vault.deleteCredential({ tenant_id: authOf(req).tenantId, tool_id: pathName(req.params.tool_id, 'tool_id'), name: pathName(req.params.name, 'name') });
    reply(res, deletedResponse, { status: 'deleted' as const, tool_id: c.tool_id, name: c.name });
  });
  return r;
}

addPaths({
  '/credentials/register': {
    post: {
      summary: 'Register a tool credential (value sealed by an HSM key, never returned); calls to the tool are then brokered to upstream_url',
      requestBody: jsonBody(registerCredentialSchema),
      responses: { 201: response('registered', registeredResponse), 422: errors[422]() },
    },
  },
  '/credentials': { get: { summary: 'Credential metadata of the tenant', responses: { 200: response('credentials', listResponse) } } },
  '/credentials/access-log': {
    get: {
      summary: 'Brokered uses of credentials, newest first',
      parameters: [queryParam('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 200 }), queryParam('tool_id')],
      responses: { 200: response('access log', accessLogResponse), 422: errors[422]() },
    },
  },
  '/credentials/{tool_id}/status': { get: { parameters: [pathParam('tool_id')], responses: { 200: response('status', statusResponse), 422: errors[422]() } } },
  '/credentials/{tool_id}/{name}': { delete: { parameters: [pathParam('tool_id'), pathParam('name')], responses: { 200: response('deleted', deletedResponse), 404: errors[404]() } } },
});
