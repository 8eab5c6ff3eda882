/**
 * Scoped API keys (docs/auth.md, "Scoped keys"): the tenant issues `agent`-scoped keys for its agents
 * (tool calls, the MCP server, the status of their own actions), lists them by prefix and revokes them.
 * Only the tenant key or a signed-in user manages keys (an agent key is refused by keyScopeGuard before
 * this runs). The tenant key itself is replaced with POST /api-keys/rotate (auth.routes.ts).
 */
import { ConflictError, NotFoundError } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { uuidParam } from '../params';
import { type AuthContext, authOf } from '../request-context';
import { parseWith } from '../validation';

const createKeySchema = z
  .object({
    scope: z.literal('agent', { error: 'scope must be "agent": the tenant key is replaced with POST /api/api-keys/rotate' }),
    name: z
      .string()
      .min(1, 'name must not be empty')
      .max(100, 'name is at most 100 characters')
      .regex(/^[\p{L}\p{N} ._:@/-]+$/u, 'name may contain letters, digits, spaces and . _ : @ / -'),
  })
  .strict();

const keySchema = z
  .object({
    id: z.string(),
    key_prefix: z.string(),
    scope: z.enum(['tenant', 'agent']),
    name: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: timestamp(),
  })
  .meta({ id: 'ApiKeyInfo', description: 'An API key by its prefix (the key itself is never stored)' });
const createdResponse = keySchema.extend({ api_key: z.string().meta({ description: 'shown once' }), message: z.string() });
const listResponse = z.object({ keys: z.array(keySchema), count: z.number().int() });
const revokedResponse = z.object({ id: z.string(), revoked: z.literal(true), revoked_at: timestamp().nullable(), message: z.string() });

/** Who issued a key, as the listing shows it (never a secret). */
const issuer = (a: AuthContext) => (a.method === 'jwt' && a.email ? `user:${a.email}` : `tenant_key`);

const present = (k: { id: string; key_prefix: string; scope: string; name: string | null; created_by: string | null; created_at: Date }): z.infer<typeof keySchema> => ({
  id: k.id,
  key_prefix: k.key_prefix,
  scope: k.scope as 'tenant' | 'agent',
  name: k.name,
  created_by: k.created_by,
  created_at: k.created_at.toISOString(),
});

export function apiKeyRoutes(d: Pick<TenantsFeature, 'apiKeys'>): Router {
  const r = Router();
  r.post('/api-keys', async (req, res) => {
    const auth = authOf(req);
    const body = parseWith(createKeySchema, req.body, 'body');
    const k = await d.apiKeys.issueAgentKey(auth.tenantId, body.name, issuer(auth));
    reply(
      res,
      createdResponse,
      {
      ...present({ id: k.id, key_prefix: k.keyPrefix, scope: k.scope, name: body.name, created_by: issuer(auth), created_at: k.createdAt }),
      api_key: k.key,
      message: 'Store this key now: it is shown only once. It may call tools, the MCP server and read its own actions only.',
      },
      201,
    );
  });
  r.get('/api-keys', async (req, res) => {
    const keys = (await d.apiKeys.list(authOf(req).tenantId)).map(present);
    reply(res, listResponse, { keys, count: keys.length });
  });
  r.delete('/api-keys/:id', async (req, res) => {
    const { tenantId } = authOf(req);
    const id = uuidParam(req.params.id, 'API key');
    const row = await d.apiKeys.revoke(tenantId, id);
    if (!row) throw new NotFoundError('API key not found');
    if (!row.revoked && row.scope === 'tenant') throw new ConflictError('This is the tenant key: replace it with POST /api/api-keys/rotate (revoking it would lock the tenant out)');
    if (!row.revoked) throw new ConflictError(`API key ${id} was already revoked at ${row.revoked_at?.toISOString()}`);
    reply(res, revokedResponse, { id, revoked: true, revoked_at: row.revoked_at?.toISOString() ?? null, message: 'The key is invalid from now on, on every gateway replica.' });
  });
  return r;
}

const secured = [{ ApiKey: [] }, { Bearer: [] }];
const agentKeyRefused = errors[403]('an agent-scoped key');
addPaths({
  '/api-keys': {
    post: {
      security: secured,
      summary: 'Issue an agent-scoped API key (tenant key or signed-in user only); the key is shown once',
      requestBody: jsonBody(createKeySchema),
      responses: { 201: response('the new key, shown once', createdResponse), 403: agentKeyRefused, 422: errors[422]() },
    },
    get: {
      security: secured,
      summary: "The tenant's active API keys, by prefix (the keys themselves are never stored)",
      responses: { 200: response('active keys', listResponse), 403: agentKeyRefused },
    },
  },
  '/api-keys/{id}': {
    delete: {
      security: secured,
      summary: 'Revoke an agent-scoped key at once, on every replica',
      parameters: [pathParam('id', { type: 'string', format: 'uuid' })],
      responses: {
        200: response('revoked', revokedResponse),
        403: agentKeyRefused,
        404: errors[404]('no such key of this tenant'),
        409: errors[409]('the tenant key (rotate it instead) or already revoked'),
        422: errors[422](),
      },
    },
  },
});
