/**
 * The permission table (http/permissions.ts) covers the OpenAPI document exactly: every operation has a
 * rule (a route added without one fails here), every rule names an operation that exists, and the public
 * ones are exactly the document's `security: []` operations. And how a request finds its rule.
 */
import '../app'; // registers every feature's paths
import { openApiDocument } from '../openapi/openapi';
import { PERMISSIONS, ROLES, permissionOf, roleAllows, roleRefusal } from './permissions';

const doc = openApiDocument() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
    .map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, public: Array.isArray(op.security) && op.security.length === 0 })),
);

describe('the permission table', () => {
  it('has a rule for every operation of the OpenAPI document, and no rule for an operation it lacks', () => {
    expect(ops.length).toBeGreaterThan(90);
    expect(ops.filter((o) => !PERMISSIONS[o.key]).map((o) => o.key)).toEqual([]);
    const documented = new Set(ops.map((o) => o.key));
    expect(Object.keys(PERMISSIONS).filter((k) => !documented.has(k))).toEqual([]);
  });

  it('marks public exactly the operations without credentials', () => {
    for (const o of ops) expect([o.key, PERMISSIONS[o.key].roles === 'public']).toEqual([o.key, o.public]);
  });

  it('lets the owner call everything, and every role its own reads', () => {
    for (const o of ops) expect([o.key, roleAllows('owner', ...(o.key.split(' ') as [string, string]))]).toEqual([o.key, true]);
    for (const role of ROLES) expect(roleAllows(role, 'GET', '/auth/me')).toBe(true);
  });

  it('finds the rule of a concrete path: literal segments before parameters, a trailing slash, HEAD as GET', () => {
    expect(permissionOf('DELETE', '/members/invitations/3b241101-e2bb-4255-8caf-4136c566a962')?.key).toBe('DELETE /members/invitations/{id}');
    expect(permissionOf('GET', '/members/invitations')?.key).toBe('GET /members/invitations');
    expect(permissionOf('POST', '/members/invitations/accept')?.key).toBe('POST /members/invitations/accept');
    expect(permissionOf('GET', '/audit/checkpoints/latest')?.key).toBe('GET /audit/checkpoints/latest');
    expect(permissionOf('HEAD', '/audit/log/')?.key).toBe('GET /audit/log');
    expect(permissionOf('GET', '/nothing/here')).toBeUndefined();
  });

  it('closes a request no rule names to every role but the owner, and the refusal names the rule', () => {
    expect(roleAllows('admin', 'GET', '/mcp/server')).toBe(false);
    expect(roleAllows('owner', 'GET', '/mcp/server')).toBe(true);
    expect(roleRefusal('viewer', 'PATCH', '/dashboard/settings').message).toBe(
      'Your role (viewer) may not PATCH /api/dashboard/settings: it needs one of the roles owner, admin, policy_author; a viewer may: reads of pages without records, personal data or secrets (docs/auth.md, "Roles")',
    );
    expect(roleRefusal('admin', 'GET', '/x').message).toContain('it needs the owner role (no rule names this request)');
  });

  it('follows the roles of issue 44', () => {
    const may = (role: (typeof ROLES)[number], key: string) => roleAllows(role, ...(key.split(' ') as [string, string]));
    expect(may('admin', 'POST /api-keys')).toBe(true);
    expect(may('admin', 'POST /api-keys/rotate')).toBe(false);
    expect(may('policy_author', 'PATCH /dashboard/settings')).toBe(true);
    expect(may('policy_author', 'POST /approve/x')).toBe(false);
    expect(may('approver', 'POST /approve/x')).toBe(true);
    expect(may('approver', 'POST /upstreams/u/tools/t/approve')).toBe(true);
    expect(may('approver', 'POST /oauth/requests/r/decision')).toBe(true);
    expect(may('approver', 'PATCH /dashboard/settings')).toBe(false);
    expect(may('auditor', 'GET /compliance/export/t')).toBe(true);
    expect(may('auditor', 'POST /credentials/register')).toBe(false);
    expect(may('viewer', 'GET /approvals')).toBe(true);
    expect(may('viewer', 'GET /audit/log')).toBe(false);
    expect(may('viewer', 'POST /reject/x')).toBe(false);
  });
});
