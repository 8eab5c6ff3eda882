/**
 * The OpenAPI 3.1.0 description (interface version 1.0.0), served at GET /api/openapi.json. Request
 * schemas are the same zod schemas the routes validate with, converted by zod's own JSON Schema output,
 * so the document cannot drift from the validation. Features register their paths with `addPaths`.
 */
import { z } from 'zod';
import { toolCallSchema } from '../pipeline/tool-call.schema';
import { settingsPatchSchema } from '../tenants/settings.schema';

type PathItem = Record<string, unknown>;
const extraPaths: Record<string, PathItem> = {};

export function addPaths(paths: Record<string, PathItem>): void {
  Object.assign(extraPaths, paths);
}

const json = (schema: z.ZodType) => ({ 'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } });
/** A required JSON request body described by the zod schema the route validates with. */
export const jsonBody = (schema: z.ZodType) => ({ required: true, content: json(schema) });
const ref = (description: string) => ({ description });
const secured = [{ ApiKey: [] }, { Bearer: [] }];

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Agent Governance Gateway', version: '1.0.0', description: 'Supervision proxy for AI agents. Implements AGCS v0.9. Input rules for every operation: JSON bodies up to 1 MB, nested at most 32 levels, no `__proto__` key; no string in a body, query or path may contain a NUL character or an unpaired UTF-16 surrogate (422 with the loc of the first offending value); a wrong method on a known path is 405 with Allow; every 429 carries Retry-After (seconds).' },
    servers: [{ url: '/api' }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
    security: secured,
    paths: {
      '/mcp/tools/call': {
        post: {
          summary: 'Submit a tool call for governance',
          requestBody: { required: true, content: json(toolCallSchema) },
          responses: {
            200: ref('allowed: {status, action_id, execution_mode[, execution_result, latency]}'),
            202: ref('pending_approval: {status, action_id, message}'),
            401: ref('Invalid API key'),
            403: ref('denied: {detail: {action_id, violations, severity, alert_tier}}'),
            422: ref('validation error: {detail: [{loc, msg, type}]}'),
            429: ref('{error: rate_limit_exceeded, tenant_id, rate_limit_rps, rate_limit_burst}'),
            502: ref('policy engine unreachable (fail-closed)'),
          },
        },
      },
      '/auth/signup': { post: { security: [], summary: 'Create a tenant and its owner; returns the API key once', responses: { 201: ref('tenant, api_key'), 409: ref('e-mail taken'), 422: ref('invalid') } } },
      '/auth/login': { post: { security: [], summary: 'Session token (JWT)', responses: { 200: ref('{access_token, token_type, expires_in}'), 401: ref('bad credentials') } } },
      '/auth/verify-email': { get: { security: [], parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }], responses: { 200: ref('verified') } } },
      '/auth/session': { post: { summary: 'Create a JWT session from the current credentials', responses: { 200: ref('token') } } },
      '/auth/me': { get: { summary: 'Current caller', responses: { 200: ref('tenant and user') } } },
      '/api-keys/rotate': { post: { summary: 'New API key; the old one is invalid at once', responses: { 200: ref('{api_key}') } } },
      '/approvals': { get: { responses: { 200: ref('{pending: [approval queue item]}') } } },
      '/approvals/history': { get: { responses: { 200: ref('{history: [...], count}') } } },
      '/approve/{action_id}': { post: { parameters: [{ name: 'action_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }], responses: { 200: ref('{status: approved, action_id}'), 404: ref('unknown'), 409: ref('not pending') } } },
      '/reject/{action_id}': { post: { parameters: [{ name: 'action_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }], responses: { 200: ref('{status: rejected, action_id}'), 404: ref('unknown'), 409: ref('not pending') } } },
      '/audit/log': { get: { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 200 } }], responses: { 200: ref('{records: [audit record]}'), 422: ref('limit out of range') } } },
      '/audit/verify': { get: { responses: { 200: ref('{valid, record_count[, failed_at_action_id, reason]}') } } },
      '/audit/tamper-simulate': { post: { summary: 'Demo only (local profile)', responses: { 200: ref('tampered'), 403: ref('disabled') } } },
      '/audit/tamper-restore': { post: { summary: 'Demo only (local profile)', responses: { 200: ref('restored'), 403: ref('disabled') } } },
      '/dashboard/settings': {
        get: { responses: { 200: ref('settings') } },
        patch: { requestBody: { content: json(settingsPatchSchema) }, responses: { 200: ref('updated settings'), 422: ref('invalid key or value') } },
      },
      '/tenants': { get: { responses: { 200: ref('admin only') } }, post: { responses: { 201: ref('admin only') } } },
      '/tenants/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: ref('tenant'), 404: ref('not found') } } },
      '/health': { get: { security: [], responses: { 200: ref('health'), 503: ref('unhealthy') } } },
      '/metrics': { get: { security: [], responses: { 200: ref('Prometheus text') } } },
      ...extraPaths,
    },
  };
}
