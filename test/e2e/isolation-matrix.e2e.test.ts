/**
 * The isolation matrix, generated from the OpenAPI document (not hand-listed): every operation is called
 * with tenant B's key against tenant A's objects, and without any key. A route whose path parameter has no
 * object of tenant A in the map below fails the test, so a new route cannot join without being covered.
 * Guarantees: another tenant's object is a 404 (or a validation error), never its data; no 5xx; every
 * non-public route refuses a request without a key.
 */
import { api, newTenant, type Tenant, toolCall } from './support/api';
import { documentOperations, fillPath, tenantObjects } from './support/route-matrix';

jest.setTimeout(120_000);

/** Operations whose side effects would disturb the run; each is covered by its own tests. */
const SKIP: Record<string, string> = {
  'POST /api-keys/rotate': 'rotating B’s key ends the matrix (rotation has its own tests)',
  'POST /anchor/trigger': 'a chain transaction per call (provenance tests)',
  'POST /audit/tamper-simulate': 'alters the caller’s own chain (foundation tests)',
  'POST /mcp/server': 'JSON-RPC (mcp-server tests)',
  'POST /mcp/server/sessions/{session_id}': 'JSON-RPC (managed-sessions tests check another tenant’s session is a 404)',
};

describe('isolation matrix (generated from the OpenAPI document)', () => {
  let a: Tenant;
  let b: Tenant;
  const params: Record<string, string> = {};
  const secrets: string[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant('Isolation A'), newTenant('Isolation B')]);
    const allowed = await api('POST', '/mcp/tools/call', { key: a.apiKey, body: toolCall({ params: { q: 'a-only-marker' } }) });
    const o = await tenantObjects(a, 'a');
    Object.assign(params, o.params);
    secrets.push(a.apiKey, a.tenantId, allowed.body.action_id, o.pendingActionId, 'a-only-marker', o.names.orders, o.names.credentialValue, o.names.credential, o.configId, o.sessionId, o.subjectId, o.names.email);
    expect(Object.values(params).every(Boolean)).toBe(true);
  });

  it('covers every operation: another tenant’s key never sees A’s objects, no key is a 401, nothing is a 5xx', async () => {
    const ops = await documentOperations();
    expect(ops.length).toBeGreaterThan(60);
    const uncovered: string[] = [];
    const leaks: string[] = [];
    const errors: string[] = [];
    const openDoors: string[] = [];
    for (const op of ops) {
      const id = `${op.method} ${op.path}`;
      if (SKIP[id]) continue;
      const { url, missing } = fillPath(op.path, params);
      if (missing.length) {
        uncovered.push(`${id} (no object for ${missing.join(', ')})`);
        continue;
      }
      const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined;
      const asB = await api(op.method, url, { key: b.apiKey, body });
      if (asB.status >= 500) errors.push(`${id} as B: ${asB.status}`);
      const text = typeof asB.body === 'string' ? asB.body : JSON.stringify(asB.body ?? '');
      // a 404 may echo the id B sent; anything of A's that B did not send is a leak
      const seen = secrets.filter((s) => text.includes(s) && !decodeURIComponent(url).includes(s));
      if (seen.length) leaks.push(`${id} as B answered ${asB.status} with A's ${seen.join(', ')}`);
      if (!op.public) {
        const anon = await api(op.method, url, { body });
        if (anon.status !== 401) openDoors.push(`${id} without a key: ${anon.status}`);
      }
    }
    expect(uncovered).toEqual([]);
    expect(leaks).toEqual([]);
    expect(errors).toEqual([]);
    expect(openDoors).toEqual([]);
  });
});
