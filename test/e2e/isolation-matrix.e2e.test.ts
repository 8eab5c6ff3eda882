/**
 * The isolation matrix, generated from the OpenAPI document (not hand-listed): every operation is called
 * with tenant B's key against tenant A's objects, and without any key. A route whose path parameter has no
 * object of tenant A in the map below fails the test, so a new route cannot join without being covered.
 * Guarantees: another tenant's object is a 404 (or a validation error), never its data; no 5xx; every
 * non-public route refuses a request without a key.
 */
import { api, newTenant, type Tenant, toolCall } from './support/api';

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
    const pending = await api('POST', '/mcp/tools/call', { key: a.apiKey, body: toolCall({ tool: 'svc_db', method: 'delete', params: { table: 'a_orders' } }) });
    await api('POST', '/mcp/tools/call', { key: a.apiKey, body: toolCall({ tool: 'svc_send_email', method: 'send', params: { to: 'a.person@example.com', body: 'Automated' } }) });
    const subject = await api('POST', '/audit/subjects/lookup', { key: a.apiKey, body: { identifier: 'a.person@example.com' } });
    await api('POST', '/credentials/register', { key: a.apiKey, body: { tool_id: 'svc_a_tool', name: 'a-cred', value: 'a-secret-value-123' } });
    const config = await api('POST', '/managed/agents', { key: a.apiKey, body: { name: 'a-agent', allowed_tools: ['svc_web_search'] } });
    const session = await api('POST', '/managed/sessions', { key: a.apiKey, body: { agent_id: config.body.id } });
    const roots = await api('GET', '/audit/log?limit=1', { key: a.apiKey });
    Object.assign(params, {
      action_id: pending.body.action_id,
      record_hash: roots.body.records[0].record_hash,
      tool_id: 'svc_a_tool',
      name: 'a-cred',
      subject_id: subject.body.subject_id,
      config_id: config.body.id,
      session_id: session.body.session_id,
      tenant_id: a.tenantId,
      id: a.tenantId,
      slug: a.slug,
      delivery_id: '00000000-0000-4000-8000-000000000000',
      tree_n: '0',
      tree_m: '0',
      tree_size: '1',
      agent_id: 'agent-1',
    });
    secrets.push(a.apiKey, a.tenantId, allowed.body.action_id, pending.body.action_id, 'a-only-marker', 'a_orders', 'a-secret-value-123', 'a-cred', config.body.id, session.body.session_id, subject.body.subject_id, 'a.person@example.com');
    expect(Object.values(params).every(Boolean)).toBe(true);
  });

  it('covers every operation: another tenant’s key never sees A’s objects, no key is a 401, nothing is a 5xx', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const ops: Array<{ method: string; path: string; public: boolean }> = [];
    for (const [path, item] of Object.entries<Record<string, { security?: unknown[] }>>(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        ops.push({ method: method.toUpperCase(), path, public: Array.isArray(op.security) && op.security.length === 0 });
      }
    }
    expect(ops.length).toBeGreaterThan(60);
    const uncovered: string[] = [];
    const leaks: string[] = [];
    const errors: string[] = [];
    const openDoors: string[] = [];
    for (const op of ops) {
      const id = `${op.method} ${op.path}`;
      if (SKIP[id]) continue;
      const missing = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((p) => !(p in params));
      if (missing.length) {
        uncovered.push(`${id} (no object for ${missing.join(', ')})`);
        continue;
      }
      const url = op.path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(params[p]));
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
