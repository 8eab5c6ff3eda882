/**
 * The OpenAPI document as GET /api/openapi.json serves it: a valid OpenAPI 3.1 document (checked by
 * @seriousme/openapi-schema-validator, an ESM package, so in a child Node process), in which every
 * operation describes its success responses with a schema and every $ref resolves.
 */
import { execFileSync } from 'node:child_process';
import '../app'; // registers every feature's paths
import { openApiDocument, operationIdOf } from './openapi';

const doc = openApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }>; security?: unknown[] }>>; components: { schemas: Record<string, unknown> } };

const VALIDATE = `
import { Validator } from '@seriousme/openapi-schema-validator';
let text = '';
for await (const c of process.stdin) text += c;
const v = new Validator();
const r = await v.validate(JSON.parse(text));
process.stdout.write(JSON.stringify({ valid: r.valid, version: v.version, errors: r.errors ?? null }));
`;

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', VALIDATE], { input: JSON.stringify(doc), cwd: __dirname, encoding: 'utf8' });
    const r = JSON.parse(out) as { valid: boolean; version: string; errors: unknown };
    expect(r.errors).toBeNull();
    expect(r).toMatchObject({ valid: true, version: '3.1' });
  });

  it('describes every response of every operation with a schema (redirects and an accepted notification: none), and every $ref resolves', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, r] of Object.entries(op.responses)) {
          if (status.startsWith('3')) continue;
          // MCP: a JSON-RPC notification is answered 202 with no body (the transport's rule)
          if (status === '202' && (path === '/mcp/server' || path === '/mcp/server/upstreams/{name}') && !r.content) continue;
          const schemas = Object.values(r.content ?? {}).map((c) => c.schema);
          if (!schemas.length || schemas.some((s) => !s)) missing.push(`${method.toUpperCase()} ${path} ${status}`);
        }
        if (!Object.keys(op.responses).some((s) => /^[23]/.test(s))) missing.push(`${method.toUpperCase()} ${path}: no 2xx`);
      }
    }
    expect(missing).toEqual([]);
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(50);
    expect(refs.filter((r) => !(r in doc.components.schemas))).toEqual([]);
  });

  it('gives every operation a unique operationId derived from method and path', () => {
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => (op as { operationId?: string }).operationId));
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operationIdOf('get', '/audit/merkle/proof/{record_hash}')).toBe('getAuditMerkleProofByRecordHash');
    expect(operationIdOf('post', '/api-keys/rotate')).toBe('postApiKeysRotate');
  });

  it('marks exactly the public operations as security: []', () => {
    const open = Object.entries(doc.paths)
      .flatMap(([p, item]) => Object.entries(item).map(([m, op]) => [`${m.toUpperCase()} ${p}`, op] as const))
      .filter(([, op]) => Array.isArray(op.security) && op.security.length === 0)
      .map(([id]) => id)
      .sort();
    expect(open).toEqual(
      [
        'GET /auth/github',
        'GET /auth/github/callback',
        // single sign-on: the provider's answer, bound to the browser that started it, is the credential (docs/auth.md)
        'GET /auth/sso/callback',
        'GET /auth/sso/start',
        'GET /auth/verify-email',
        'GET /dashboard/public',
        'GET /dashboard/public/{slug}',
        'GET /health',
        'GET /mcp/server/health',
        'GET /metrics',
        // OAuth 2.1 of the MCP endpoints: the way to get a credential (docs/auth.md)
        'GET /oauth/authorize',
        'POST /oauth/register',
        'POST /oauth/revoke',
        'POST /oauth/token',
        'GET /openapi.json',
        'GET /transparency',
        'GET /transparency/{tenant_id}',
        'POST /auth/login',
        // the console's refresh cookie is their credential (docs/console.md)
        'POST /auth/logout',
        'POST /auth/refresh',
        'POST /auth/signup',
        // the invitation's token is its credential (docs/auth.md, "Members, invitations and roles")
        'POST /members/invitations/accept',
        // an upstream authorization server's redirect back (the state and the binding cookie are its credential), and the gateway's client metadata document
        'GET /upstreams/oauth/callback',
        'GET /upstreams/oauth/client-metadata.json',
      ].sort(),
    );
  });
});
