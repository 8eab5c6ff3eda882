/**
 * The OpenAPI 3.1.0 description (interface version 1.0.0), served at GET /api/openapi.json. Request and
 * response schemas are the zod schemas the routes validate with and answer with (openapi/schema.ts), so
 * the document cannot drift from the code. Features register their paths with `addPaths` next to their
 * routes; every operation also gets the error responses any route may answer (401 when secured, 429, and
 * a `default` error) unless it describes them itself, and an operationId derived from method and path.
 */
import type { z } from 'zod';
import { componentSchemas, defaultResponse, errors, json } from './schema';

type PathItem = Record<string, unknown>;
const paths: Record<string, PathItem> = {};

export function addPaths(more: Record<string, PathItem>): void {
  Object.assign(paths, more);
}

/** A required JSON request body described by the zod schema the route validates with. */
export const jsonBody = (schema: z.ZodType) => ({ required: true, content: json(schema, 'input') });
/** An optional JSON request body. */
export const optionalJsonBody = (schema: z.ZodType) => ({ required: false, content: json(schema, 'input') });
export const secured = [{ ApiKey: [] }, { Bearer: [] }];
/** A path parameter. */
export const pathParam = (name: string, schema: Record<string, unknown> = { type: 'string' }) => ({ name, in: 'path', required: true, schema });
/** An optional query parameter. */
export const queryParam = (name: string, schema: Record<string, unknown> = { type: 'string' }) => ({ name, in: 'query', schema });

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** A stable operationId from method and path (`GET /audit/merkle/proof/{record_hash}` → `getAuditMerkleProofByRecordHash`), for generated clients. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((seg) => (seg.startsWith('{') ? ['by', ...seg.slice(1, -1).split(/[_.-]/)] : seg.split(/[_.-]/)));
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

function withCommonResponses(path: string, item: PathItem): PathItem {
  const out: PathItem = {};
  for (const [method, op] of Object.entries(item)) {
    if (!METHODS.includes(method)) {
      out[method] = op;
      continue;
    }
    const o = op as { security?: unknown[]; responses?: Record<string, unknown> };
    const isPublic = Array.isArray(o.security) && o.security.length === 0;
    const responses = { ...(o.responses ?? {}) };
    if (!isPublic && !responses[401]) responses[401] = errors[401]();
    if (!responses[429]) responses[429] = errors[429]();
    if (!responses.default) responses.default = defaultResponse();
    out[method] = { operationId: operationIdOf(method, path), ...o, responses };
  }
  return out;
}

export function openApiDocument(): Record<string, unknown> {
  const built = Object.fromEntries(
    Object.entries(paths)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([p, item]) => [p, withCommonResponses(p, item)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Governance Gateway',
      version: '1.0.0',
      description:
        'Supervision proxy for AI agents. Implements AGCS v0.9. Input rules for every operation: JSON bodies up to 1 MB, nested at most 32 levels, no `__proto__` key; no string in a body, query or path may contain a NUL character or an unpaired UTF-16 surrogate (422 with the loc of the first offending value); a wrong method on a known path is 405 with Allow; every 429 carries Retry-After (seconds). Public operations (`security: []`) need no credentials and are rate-limited per client IP.',
    },
    servers: [{ url: '/api' }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      schemas: Object.fromEntries(Object.entries(componentSchemas).sort(([a], [b]) => a.localeCompare(b))),
    },
    security: secured,
    paths: built,
  };
}
