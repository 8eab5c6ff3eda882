/**
 * Approvals an agent cannot grant itself (docs/auth.md, "Scoped keys" and "Approvals"), through the public
 * API of the running fleet:
 * - the scope matrix, generated from the OpenAPI document (not hand-listed): every operation x {tenant key,
 *   agent key, another tenant's key, a signed-in user's session}; an agent key reaches only tool calls, the
 *   MCP server, its own actions and /auth/me, everything else is a 403 naming the rule;
 * - agent keys issued, listed by prefix, revoked at once; only the tenant key or a user manages them;
 * - a new tenant's approvals need a signed-in human (not an API key, not a session made from one);
 * - an approval is bound to the exact call (params hash, bundle revisions), its retry allowed once with
 *   the same params only;
 * - a queued action past its time is `expired` (409 on a late decision, audit record, action.expired webhook).
 */
import { createHash, randomUUID } from 'node:crypto';
import { type Db, createDb } from '@agw/shared';
import { type Tenant, api, eventually, humanSession, newTenant, toolCall } from './support/api';
import { E2E_DATABASE_URL } from './support/e2e-env';
import { documentOperations, fillPath, tenantObjects } from './support/route-matrix';

jest.setTimeout(180_000);

/** What an agent key may call, written from the issue (not read from the gateway's code). */
const AGENT_ALLOWED = new Set(['POST /mcp/tools/call', 'POST /mcp/server', 'POST /mcp/server/sessions/{session_id}', 'POST /mcp/server/upstreams/{name}', 'GET /actions/{action_id}', 'GET /auth/me']);

/** Operations whose side effects would disturb the run; each is covered by its own tests. */
const SKIP: Record<string, string> = {
  'POST /api-keys/rotate': 'rotating the tenant key ends the matrix (rotation has its own tests; an agent key is refused below)',
  'POST /anchor/trigger': 'a chain transaction per call (provenance tests)',
  'POST /audit/tamper-simulate': 'alters the chain (foundation tests)',
};

/** RFC 8785 of plain JSON (objects, arrays, strings, integers): keys sorted by UTF-16 code units, no whitespace. */
const jcs = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(jcs).join(',')}]` : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}` : JSON.stringify(v);
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

async function agentKey(t: Tenant, name = 'agent'): Promise<{ id: string; key: string; prefix: string }> {
  const r = await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name } });
  expect(r.status).toBe(201);
  return { id: r.body.id, key: r.body.api_key, prefix: r.body.key_prefix };
}

const isScopeRefusal = (r: { status: number; body: any }) => r.status === 403 && typeof r.body?.detail === 'string' && r.body.detail.includes('agent-scoped');

let db: Db;
beforeAll(() => {
  db = createDb(E2E_DATABASE_URL);
});
afterAll(async () => {
  await db.destroy();
});

describe('the scope matrix (generated from the OpenAPI document)', () => {
  it('every operation x {tenant key, agent key, another tenant’s key, session}', async () => {
    const [a, b] = await Promise.all([newTenant('Scope A'), newTenant('Scope B')]);
    // four calls per operation: A's rate limit must not answer for the scopes
    for (const t of [a, b]) expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 100_000, rate_limit_burst: 1_000_000 } })).status).toBe(200);
    const agent = await agentKey(a, 'matrix agent');
    const session = await humanSession(a);
    const o = await tenantObjects(a, 'scope', agent.key);
    expect(o.pendingStatus).toBe(202);
    const params = o.params;
    expect(Object.values(params).every(Boolean)).toBe(true);
    const secretsOfA = [a.apiKey, agent.key, o.pendingActionId, o.names.orders, o.names.credentialValue, o.configId, o.sessionId, o.names.email];

    const ops = await documentOperations();
    expect(ops.length).toBeGreaterThan(60);
    expect(ops.map((o) => `${o.method} ${o.path}`)).toEqual(expect.arrayContaining([...AGENT_ALLOWED, 'POST /api-keys', 'GET /api-keys', 'DELETE /api-keys/{id}']));

    const problems: string[] = [];
    let refusedForAgent = 0;
    for (const op of ops) {
      const id = `${op.method} ${op.path}`;
      if (SKIP[id]) continue;
      const { url, missing } = fillPath(op.path, params);
      if (missing.length) {
        problems.push(`${id}: no object for ${missing.join(', ')}`);
        continue;
      }
      const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined;
      const asAgent = await api(op.method, url, { key: agent.key, body });
      const asTenant = await api(op.method, url, { key: a.apiKey, body });
      const asOther = await api(op.method, url, { key: b.apiKey, body });
      const asSession = await api(op.method, url, { token: session, body });
      for (const [who, r] of [
        ['agent key', asAgent],
        ['tenant key', asTenant],
        ['other tenant key', asOther],
        ['session', asSession],
      ] as const) {
        if (r.status >= 500) problems.push(`${id} as ${who}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      if (op.public) {
        if (isScopeRefusal(asAgent)) problems.push(`${id} is public but refused an agent key`);
        continue;
      }
      if (AGENT_ALLOWED.has(id)) {
        if (isScopeRefusal(asAgent) || asAgent.status === 401) problems.push(`${id} should be open to an agent key: ${asAgent.status}`);
      } else {
        refusedForAgent++;
        if (!isScopeRefusal(asAgent)) problems.push(`${id} as agent key: ${asAgent.status} ${JSON.stringify(asAgent.body).slice(0, 200)} (want the agent-scope 403)`);
        else if (!asAgent.body.detail.includes(`${op.method} /api${url}`)) problems.push(`${id}: the 403 does not name the request: ${asAgent.body.detail}`);
      }
      for (const [who, r] of [
        ['tenant key', asTenant],
        ['session', asSession],
        ['other tenant key', asOther],
      ] as const) {
        if (isScopeRefusal(r) || r.status === 401) problems.push(`${id} as ${who}: ${r.status} (only agent keys are scope-limited)`);
      }
      const text = JSON.stringify(asOther.body ?? '');
      const leaked = secretsOfA.filter((s) => text.includes(s) && !decodeURIComponent(url).includes(s));
      if (leaked.length) problems.push(`${id} as another tenant's key answered ${asOther.status} with A's ${leaked.join(', ')}`);
    }
    expect(problems).toEqual([]);
    expect(refusedForAgent).toBeGreaterThan(50);
    // and the skipped one
    expect(isScopeRefusal(await api('POST', '/api-keys/rotate', { key: agent.key }))).toBe(true);
  });
});

describe('agent-scoped keys', () => {
  it('are issued (shown once), listed by prefix and revoked at once, by the tenant key or a signed-in user only', async () => {
    const t = await newTenant('Keys');
    const human = await humanSession(t);
    const k1 = await agentKey(t, 'billing bot');
    expect(k1.key).toMatch(/^agw_agent_/);
    const k2r = await api('POST', '/api-keys', { token: human, body: { scope: 'agent', name: 'crm bot' } });
    expect(k2r.status).toBe(201);
    expect(k2r.body).toMatchObject({ scope: 'agent', name: 'crm bot', created_by: `user:${t.email}` });
    const list = await api('GET', '/api-keys', { token: human });
    expect(list.body.count).toBe(3);
    expect(list.body.keys.map((k: { scope: string; name: string | null }) => [k.scope, k.name]).sort()).toEqual([['agent', 'billing bot'], ['agent', 'crm bot'], ['tenant', null]]);
    expect(JSON.stringify(list.body)).not.toContain(k1.key);
    expect(list.body.keys.find((k: { id: string }) => k.id === k1.id)).toMatchObject({ key_prefix: k1.prefix, created_by: 'tenant_key' });

    expect((await api('GET', '/auth/me', { key: k1.key })).body).toMatchObject({ tenant_id: t.tenantId, auth_method: 'api_key', key_scope: 'agent' });
    for (const [m, p, body] of [
      ['POST', '/api-keys', { scope: 'agent', name: 'self-made' }],
      ['GET', '/api-keys', undefined],
      ['DELETE', `/api-keys/${k2r.body.id}`, undefined],
      ['POST', '/auth/session', undefined],
    ] as const) {
      const r = await api(m, p, { key: k1.key, body });
      expect(isScopeRefusal(r)).toBe(true);
    }
    // precise 422s
    const bad = await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'tenant', name: 'x' } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('rotate');
    expect((await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name: '' } })).status).toBe(422);
    expect((await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name: 'x', extra: 1 } })).status).toBe(422);

    // revocation: at once; the tenant key is rotated, not revoked; another tenant's key id is a 404
    const other = await newTenant('Keys other');
    expect((await api('DELETE', `/api-keys/${k1.id}`, { key: other.apiKey })).status).toBe(404);
    const tenantKeyId = list.body.keys.find((k: { scope: string }) => k.scope === 'tenant').id;
    const refuse = await api('DELETE', `/api-keys/${tenantKeyId}`, { key: t.apiKey });
    expect(refuse.status).toBe(409);
    expect(refuse.body.detail).toContain('/api/api-keys/rotate');
    expect((await api('POST', '/mcp/tools/call', { key: k1.key, body: toolCall() })).status).toBe(200);
    const del = await api('DELETE', `/api-keys/${k1.id}`, { key: t.apiKey });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: k1.id, revoked: true });
    expect((await api('POST', '/mcp/tools/call', { key: k1.key, body: toolCall() })).status).toBe(401);
    expect((await api('DELETE', `/api-keys/${k1.id}`, { key: t.apiKey })).status).toBe(409);

    // rotating the tenant key leaves agent keys working
    const rot = await api('POST', '/api-keys/rotate', { key: t.apiKey });
    expect(rot.status).toBe(200);
    expect((await api('POST', '/mcp/tools/call', { key: k2r.body.api_key, body: toolCall() })).status).toBe(200);
    expect((await api('GET', '/dashboard/settings', { key: rot.body.api_key })).body.api_key_prefix).toBe(rot.body.key_prefix);
  });

  it('reach the MCP server as a bearer token', async () => {
    const t = await newTenant('Keys MCP');
    const k = await agentKey(t);
    const r = await api('POST', '/mcp/server', {
      headers: { authorization: `Bearer ${k.key}`, accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } },
    });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).toContain('serverInfo');
    // the GET a 2025-era client sends after initialize (and DELETE): the transport's 405, not the scope's 403
    for (const method of ['GET', 'DELETE'] as const) {
      for (const path of ['/mcp/server', `/mcp/server/sessions/${randomUUID()}`]) {
        const res = await api(method, path, { headers: { authorization: `Bearer ${k.key}`, accept: 'text/event-stream' } });
        expect([method, path, res.status, res.body]).toEqual([method, path, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, use POST' }, id: null }]);
      }
    }
  });

  it('read the status of their own queued actions only', async () => {
    const t = await newTenant('Keys status');
    const [k1, k2] = [await agentKey(t, 'one'), await agentKey(t, 'two')];
    const q = await api('POST', '/mcp/tools/call', { key: k1.key, body: toolCall({ method: 'delete', params: { table: 't' } }) });
    expect(q.status).toBe(202);
    const mine = await api('GET', `/actions/${q.body.action_id}`, { key: k1.key });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ action_id: q.body.action_id, status: 'pending', tool: 'svc_web_search', method: 'delete', params_sha256: sha256(jcs({ table: 't' })), retry_allowed: false });
    expect(Date.parse(mine.body.expires_at) - Date.parse(mine.body.queued_at)).toBe(24 * 3600 * 1000);
    expect((await api('GET', `/actions/${q.body.action_id}`, { key: k2.key })).status).toBe(404);
    expect((await api('GET', `/actions/${q.body.action_id}`, { key: t.apiKey })).status).toBe(200);
    expect((await api('GET', `/actions/${randomUUID()}`, { key: k1.key })).status).toBe(404);
  });
});

describe('approvals an agent cannot grant itself', () => {
  it('a new tenant’s approvals need a signed-in human: not an agent key, not the tenant key, not a session made from a key', async () => {
    const t = await newTenant('Human approvals');
    const settings = await api('GET', '/dashboard/settings', { key: t.apiKey });
    expect(settings.body).toMatchObject({ approvals_require_human: true, approval_expiry_seconds: 86400 });
    const agent = await agentKey(t);
    const q = await api('POST', '/mcp/tools/call', { key: agent.key, body: toolCall({ method: 'delete', params: { table: 'users' } }) });
    expect(q.status).toBe(202);
    const id = q.body.action_id;
    expect(isScopeRefusal(await api('POST', `/approve/${id}`, { key: agent.key }))).toBe(true);
    const byKey = await api('POST', `/approve/${id}`, { key: t.apiKey });
    expect(byKey.status).toBe(403);
    expect(byKey.body.detail).toContain('approvals_require_human');
    const minted = (await api('POST', '/auth/session', { key: t.apiKey })).body.access_token;
    const byMinted = await api('POST', `/reject/${id}`, { token: minted });
    expect(byMinted.status).toBe(403);
    expect(byMinted.body.detail).toContain('session token made from an API key');
    expect((await api('GET', `/actions/${id}`, { key: agent.key })).body.status).toBe('pending');
    const ok = await api('POST', `/approve/${id}`, { token: await humanSession(t), body: { note: 'checked' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'approved', action_id: id, execution_mode: 'agent_direct' });
  });

  it('a signed-in human may turn it off (the spec’s behaviour: the tenant key decides); the settings are validated', async () => {
    const t = await newTenant('Key approvals');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: 'yes' } })).status).toBe(422);
    const tooShort = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approval_expiry_seconds: 10 } });
    expect(tooShort.status).toBe(422);
    expect(JSON.stringify(tooShort.body)).toContain('approval_expiry_seconds');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approval_expiry_seconds: 1.5 } })).status).toBe(422);
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approval_expiry_seconds: 31 * 86400 } })).status).toBe(422);
    // turning the human-only gate off is itself human-only (human-gates.e2e.test.ts)
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approvals_require_human: false, approval_expiry_seconds: 600 } })).status).toBe(403);
    const off = await api('PATCH', '/dashboard/settings', { token: await humanSession(t), body: { approvals_require_human: false, approval_expiry_seconds: 600 } });
    expect(off.body).toMatchObject({ approvals_require_human: false, approval_expiry_seconds: 600 });
    const q = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ method: 'purge', params: {} }) });
    const st = (await api('GET', `/actions/${q.body.action_id}`, { key: t.apiKey })).body;
    expect(Date.parse(st.expires_at) - Date.parse(st.queued_at)).toBe(600_000);
    expect((await api('POST', `/approve/${q.body.action_id}`, { key: t.apiKey })).body).toMatchObject({ status: 'approved' });
  });

  it('binds the approval to the exact call: the record carries the params hash and bundle revisions; only the same params retry, once', async () => {
    const t = await newTenant('Bound approvals');
    const human = await humanSession(t);
    const agent = await agentKey(t);
    const params = { table: 'invoices', where: { id: [7, 8] } };
    const q = await api('POST', '/mcp/tools/call', { key: agent.key, body: toolCall({ method: 'delete', params }) });
    expect(q.status).toBe(202);
    const id = q.body.action_id;
    const retry = (p: Record<string, unknown>, key = agent.key) => api('POST', '/mcp/tools/call', { key, body: toolCall({ method: 'delete', params: p, approved_action_id: id }) });
    // before the approval a retry is an ordinary call: queued again under a new id
    const early = await retry(params);
    expect(early.status).toBe(202);
    expect(early.body.action_id).not.toBe(id);

    const ok = await api('POST', `/approve/${id}`, { token: human });
    const hash = sha256(jcs(params));
    expect(ok.body).toMatchObject({ status: 'approved', execution_mode: 'agent_direct', approval_binding: { params_sha256: hash, evaluated_bundle_revision: expect.any(String), bundle_revision: expect.any(String) } });
    expect((await api('GET', `/actions/${id}`, { key: agent.key })).body).toMatchObject({ status: 'approved', execution_mode: 'agent_direct', retry_allowed: true });

    const other = await agentKey(t, 'other agent');
    const changed = await retry({ table: 'invoices', where: { id: [7, 8, 9] } });
    expect(changed.status).toBe(202); // a new evaluation, not the approved one
    expect(changed.body.action_id).not.toBe(id);
    expect((await retry(params, other.key)).status).toBe(202); // another agent key
    const same = await retry({ where: { id: [7, 8] }, table: 'invoices' }); // same params, other key order
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ status: 'allowed', action_id: id, execution_mode: 'agent_direct' });
    const again = await retry(params);
    expect(again.status).toBe(202); // once
    expect((await api('GET', `/actions/${id}`, { key: agent.key })).body).toMatchObject({ retry_allowed: false, retried_at: expect.any(String) });

    const records = (await api('GET', '/audit/log?limit=1000', { key: t.apiKey })).body.records.filter((r: { action_id: string }) => r.action_id === id);
    const decision = records.find((r: { source: string }) => r.source === 'control_plane');
    expect(decision.details).toMatchObject({ approval: 'approved', decided_by: t.email, approval_binding: { params_sha256: hash } });
    const executed = records.find((r: { source: string; decision: string }) => r.source === 'mcp_governed' && r.decision === 'allow');
    expect(executed).toMatchObject({ execution_mode: 'agent_direct', details: { stage: 'approved_retry', approved_action_id: id, approval_binding: { params_sha256: hash } } });
    expect(executed.bundle_revision).toBe(decision.details.approval_binding.evaluated_bundle_revision);
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body.valid).toBe(true);
  });

  it('expires a queued action past its time: 409 on a late decision, an audit record, an action.expired webhook', async () => {
    const t = await newTenant('Expiry');
    const human = await humanSession(t);
    const set = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { approval_expiry_seconds: 3600, webhook_url: 'https://127.0.0.1:9/agw-hook', webhook_events: ['action.expired'] } });
    expect(set.status).toBe(200);
    const q = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ method: 'drop', params: { table: 'x' } }) });
    const id = q.body.action_id;
    // The running fleet's clock cannot be set from here: the action's due time is moved to the past, which
    // is what the clock passing it means (the clock-driven sweep: services/gateway/test/approval-expiry.int.test.ts).
    await db.updateTable('approvals').set({ expires_at: new Date(Date.now() - 1000) }).where('tenant_id', '=', t.tenantId).where('action_id', '=', id).execute();
    expect((await api('GET', '/approvals', { token: human })).body.pending).toEqual([]);
    const late = await api('POST', `/approve/${id}`, { token: human });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(/expired at .* without a decision/);
    expect((await api('POST', `/reject/${id}`, { token: human })).status).toBe(409);
    expect((await api('GET', `/actions/${id}`, { key: t.apiKey })).body).toMatchObject({ status: 'expired' });
    const hist = (await api('GET', '/approvals/history', { token: human })).body.history.find((h: { action_id: string }) => h.action_id === id);
    expect(hist).toMatchObject({ status: 'expired', decided_by: 'system:expiry' });
    const rec = (await api('GET', '/audit/log?limit=1000', { key: t.apiKey })).body.records.filter((r: { action_id: string; source: string }) => r.action_id === id && r.source === 'control_plane');
    expect(rec).toHaveLength(1);
    expect(rec[0]).toMatchObject({ decision: 'deny', details: { approval: 'expired', approval_binding: { params_sha256: sha256(jcs({ table: 'x' })) } } });
    const delivery = await eventually(async () => (await api('GET', `/webhooks/deliveries?action_id=${id}`, { key: t.apiKey })).body.deliveries?.[0]);
    expect(delivery).toMatchObject({ event: 'action.expired' });
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body.valid).toBe(true);
  });
});
