/**
 * Managed agents and sessions through the public API, with the local stand-in of the agent platform
 * (real HTTP + SSE, and a real MCP client of our per-session MCP server) scripted through its control API.
 */
import { api, fleet, humanSession, newTenant, recordRaw, type Tenant } from './support/api';
import { script, standIn } from './support/stand-in';

jest.setTimeout(120_000);

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T = await fn();
  while (!ok(last)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
    last = await fn();
  }
  return last;
}

const status = (t: Tenant, id: string) => api('GET', `/managed/sessions/${id}/status`, { key: t.apiKey }).then((r) => r.body);

async function config(t: Tenant, over: Record<string, unknown> = {}) {
  const r = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: 'ops-agent', allowed_tools: ['svc_web_search', 'svc_send_email', 'svc_payments'], require_human_approval: ['svc_send_*'], ...over } });
  expect(r.status).toBe(200);
  return r.body;
}

async function session(t: Tenant, agentId: string, body: Record<string, unknown> = {}) {
  const r = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: agentId, user_message: 'Handle the ticket', ...body } });
  expect(r.status).toBe(200);
  return r.body;
}

const textOf = (mcpResult: any) => (mcpResult?.content ?? []).map((c: any) => c.text).join('\n');

describe('managed agent configs', () => {
  let a: Tenant;
  let b: Tenant;
  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant('Managed A'), newTenant('Managed B')]);
  });

  it('creates a config with the spec defaults and reads it back; another tenant gets 404', async () => {
    const c = await config(a, { governance_profile: { risk_level: 'high' } });
    expect(c).toMatchObject({ tenant_id: a.tenantId, name: 'ops-agent', max_session_hours: 8, max_delegation_depth: 1, max_daily_sessions: null, parent_agent_id: null, governance_profile: { risk_level: 'high' } });
    expect(c.anthropic_model).toEqual(expect.any(String));
    expect((await api('GET', `/managed/agents/${c.id}`, { key: a.apiKey })).body).toEqual(c);
    const list = await api('GET', '/managed/agents', { key: a.apiKey });
    expect(list.body.count).toBe(list.body.configs.length);
    expect(list.body.configs.map((x: any) => x.id)).toContain(c.id);
    expect((await api('GET', `/managed/agents/${c.id}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('GET', '/managed/agents', { key: b.apiKey })).body.configs.map((x: any) => x.id)).not.toContain(c.id);
    expect((await api('GET', '/managed/agents/not-a-uuid', { key: a.apiKey })).status).toBe(404);
    expect((await api('GET', '/managed/agents')).status).toBe(401);
  });

  it.each([
    [{ name: '' }, ['body', 'name']],
    [{ name: 'x'.repeat(257) }, ['body', 'name']],
    [{ name: 'x', max_session_hours: 0.05 }, ['body', 'max_session_hours']],
    [{ name: 'x', max_session_hours: 24.5 }, ['body', 'max_session_hours']],
    [{ name: 'x', max_daily_sessions: 0 }, ['body', 'max_daily_sessions']],
    [{ name: 'x', max_daily_sessions: 1001 }, ['body', 'max_daily_sessions']],
    [{ name: 'x', max_delegation_depth: 6 }, ['body', 'max_delegation_depth']],
    [{ name: 'x', allowed_tools: 'svc_a' }, ['body', 'allowed_tools']],
    [{ name: 'x', surprise: true }, ['body', 'surprise']],
    [{}, ['body', 'name']],
  ])('rejects %j with 422 at %j', async (body, loc) => {
    const r = await api('POST', '/managed/agents', { key: a.apiKey, body });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((d: any) => d.loc)).toContainEqual(loc);
  });

  it('enforces parent existence (404, also across tenants) and every ancestor’s delegation depth (422)', async () => {
    expect((await api('POST', '/managed/agents', { key: a.apiKey, body: { name: 'child', parent_agent_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
    expect((await api('POST', '/managed/agents', { key: a.apiKey, body: { name: 'child', parent_agent_id: 'nope' } })).status).toBe(404);
    const root = await config(a, { name: 'root' });
    expect((await api('POST', '/managed/agents', { key: b.apiKey, body: { name: 'intruder', parent_agent_id: root.id } })).status).toBe(404);
    const child = await config(a, { name: 'child', parent_agent_id: root.id, max_delegation_depth: 5 });
    expect(child.parent_agent_id).toBe(root.id);
    const grandchild = await api('POST', '/managed/agents', { key: a.apiKey, body: { name: 'grandchild', parent_agent_id: child.id } });
    expect(grandchild.status).toBe(422);
    expect(grandchild.body.detail[0]).toMatchObject({ loc: ['body', 'parent_agent_id'], type: 'delegation_depth_exceeded' });
    const deepRoot = await config(a, { name: 'deep-root', max_delegation_depth: 2 });
    const c1 = await config(a, { name: 'c1', parent_agent_id: deepRoot.id, max_delegation_depth: 5 });
    await config(a, { name: 'c2', parent_agent_id: c1.id });
  });
});

describe('managed sessions', () => {
  let a: Tenant;
  let b: Tenant;
  let cfg: any;
  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant('Sessions A'), newTenant('Sessions B')]);
    // the financial template denies large transfers, so one session sees allow, deny and pending
    expect((await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { policy_template: 'financial', policy_config: { business_hours_only: false } } })).status).toBe(200);
    cfg = await config(a);
  });

  it('governs a scripted session end to end: MCP calls allowed, denied and queued; built-in tools observed across a dropped stream; totals live; compliance and replay', async () => {
    const s = await session(a, cfg.id);
    expect(s).toMatchObject({ tenant_id: a.tenantId, agent_id: cfg.id, status: 'active', governance: 'active' });
    expect(s.system_prompt_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(s.mcp_server_url).toMatch(new RegExp(`/api/mcp/server/sessions/${s.session_id}$`));
    expect(s.anthropic_session_id).toMatch(/^sesn_/);

    // the platform session was created with our MCP server (always_allow; always_ask for the tool
    // require_human_approval matches: docs/managed.md) and the governance prompt
    const platform = await standIn('GET', `/_stand-in/sessions/${s.anthropic_session_id}`);
    expect(JSON.stringify(platform.agent.mcp_servers)).toContain(s.mcp_server_url);
    const toolset = platform.agent.tools.find((x: any) => x.type === 'mcp_toolset');
    expect(toolset.default_config.permission_policy).toEqual({ type: 'always_allow' });
    expect(toolset.configs).toEqual([{ name: 'svc_send_email', enabled: true, permission_policy: { type: 'always_ask' } }]);
    expect(platform.agent.system).toContain('Governance');
    expect(JSON.stringify(platform)).not.toContain(a.apiKey);

    // the e-mail comes last: the platform holds it for a human (managed-approvals.e2e.test.ts follows that through)
    const running = script(s.anthropic_session_id, [
      { mcp_list: true },
      { mcp_call: { tool: 'svc_web_search', arguments: { method: 'search', params: { q: 'status page' } } } },
      { mcp_call: { tool: 'svc_payments', arguments: { method: 'transfer', params: { amount: 9000, currency: 'EUR' } } } },
      { tool_use: { name: 'bash', input: { command: 'ls -la' } } },
      { tool_use: { name: 'read', input: { file_path: 'README.md' } } },
      { drop_stream: true },
      { tool_use: { name: 'bash', input: { command: 'git status' } } },
      { mcp_call: { tool: 'svc_send_email', arguments: { method: 'send', params: { to: 'ops@example.com', body: 'Automated: done' } } } },
    ]);

    const st = await until('totals', () => status(a, s.session_id), (x) => x.total_observed_calls === 3 && x.total_pending === 1);
    expect(st).toMatchObject({ session_id: s.session_id, anthropic_session_id: s.anthropic_session_id, agent_id: cfg.id, status: 'active', total_governed_calls: 3, total_observed_calls: 3, total_denied: 1, total_pending: 1, ended_at: null });

    const audit = await api('GET', `/managed/sessions/${s.session_id}/audit`, { key: a.apiKey });
    expect(audit.status).toBe(200);
    const recs = audit.body.records;
    expect(audit.body.count).toBe(recs.length);
    expect(recs[0]).toMatchObject({ tool: 'managed_session', method: 'create', source: 'control_plane' });
    expect(recs.map((r: any) => r.requested_at)).toEqual([...recs.map((r: any) => r.requested_at)].sort());
    const observed = recs.filter((r: any) => r.source === 'mcp_observed');
    expect(observed.map((r: any) => [r.tool, r.method, r.decision])).toEqual([
      ['bash', 'shell', 'observed'],
      ['read', 'file', 'observed'],
      ['bash', 'shell', 'observed'],
    ]);
    expect(new Set(recs.map((r: any) => r.action_id)).size).toBe(recs.length);
    expect(recs.filter((r: any) => r.source === 'mcp_governed').map((r: any) => r.decision).sort()).toEqual(['allow', 'deny', 'requires_human']);
    expect((await api('GET', `/managed/sessions/${s.session_id}/audit?limit=2`, { key: a.apiKey })).body.records).toHaveLength(2);

    // the pending call is in the tenant's approval queue with the session id and the platform's tool-use id
    const pending = await api('GET', '/approvals', { key: a.apiKey });
    const item = pending.body.pending.find((p: any) => p.session_id === s.session_id);
    expect(item).toMatchObject({ tool: 'svc_send_email', agent_id: cfg.id, queue_reason: 'platform_confirmation', platform_tool_use_id: expect.stringMatching(/^sevt_/) });

    const consumers = await api('GET', '/managed/consumers', { key: a.apiKey });
    expect(consumers.body.consumers.find((c: any) => c.session_id === s.session_id)).toMatchObject({ anthropic_session_id: s.anthropic_session_id, tenant_id: a.tenantId, agent_id: cfg.id, status: 'connected' });
    expect(consumers.body.consumers.find((c: any) => c.session_id === s.session_id).events_processed).toBeGreaterThan(3);

    const comp = await api('GET', `/managed/sessions/${s.session_id}/compliance`, { key: a.apiKey });
    expect(comp.status).toBe(200);
    expect(comp.body.session).toMatchObject({ id: s.session_id, agent_id: cfg.id, status: 'active', system_prompt_hash: s.system_prompt_hash, ended_at: null });
    expect(comp.body.session.duration_seconds).toBeGreaterThan(0);
    expect(comp.body.governance_profile).toEqual({ allowed_tools: cfg.allowed_tools, require_human_approval: ['svc_send_*'] });
    expect(comp.body.summary).toMatchObject({ governed_calls: 3, observed_calls: 3, denied: 1, pending: 1, anomalies_detected: 0, denial_rate: '33.3%', approvals_used: 0 });
    expect(comp.body.summary.total_events).toBe(recs.length);
    expect(comp.body.timeline.map((t: any) => t.action_id)).toEqual(recs.map((r: any) => r.action_id));
    expect(Object.keys(comp.body.agcs_controls)).toEqual(['AG-1.1', 'AG-1.2', 'AG-1.3', 'AG-1.6', 'AG-1.9', 'AG-2.1']);
    expect(comp.body.agcs_controls['AG-1.2']).toMatch(/verifies/);
    expect(Date.parse(comp.body.generated_at)).toBeGreaterThan(0);

    const same = await api('POST', `/managed/sessions/${s.session_id}/replay`, { key: a.apiKey });
    expect(same.body).toEqual({ session_id: s.session_id, total_replayed: 3, consistent: 3, changed: 0, changes: [] });
    // raise the transaction limit: the denied transfer would now wait for approval instead
    await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { policy_config: { business_hours_only: false, transaction_limit: 100000 } } });
    const changed = await api('POST', `/managed/sessions/${s.session_id}/replay`, { key: a.apiKey });
    expect(changed.body).toMatchObject({ total_replayed: 3, consistent: 2, changed: 1 });
    expect(changed.body.changes[0]).toMatchObject({ tool: 'svc_payments', original_decision: 'deny', replayed_decision: 'requires_human' });
    await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { policy_config: { business_hours_only: false } } });

    // the tenant chain still verifies with the session's records in it
    expect((await api('GET', '/audit/verify', { key: a.apiKey })).body.valid).toBe(true);

    // the script's results: allowed, denied, then the e-mail the platform held (a reviewer rejects it)
    expect((await api('POST', `/reject/${item.action_id}`, { token: await humanSession(a), body: { note: 'not today' } })).status).toBe(200);
    const { results } = await running;
    expect([...results[0]].sort()).toEqual(['svc_payments', 'svc_send_email', 'svc_web_search']);
    expect(JSON.parse(textOf(results[1]))).toMatchObject({ status: 'allowed', execution_mode: 'agent_direct' });
    expect(results[2].isError).toBe(true);
    expect(JSON.parse(textOf(results[2]))).toMatchObject({ status: 'denied', violations: expect.arrayContaining(['transaction_exceeds_limit']) });
    expect(results[7]).toMatchObject({ isError: true, confirmation: 'deny' });
    expect(textOf(results[7])).toContain('not today');
  });

  it('auto-interrupts on a dangerous shell command: user.interrupt reaches the platform, the MCP server refuses further calls, a second interrupt is 409, anomaly.detected and session.interrupted go to the webhook service', async () => {
    // a subscriber to the two session events (nothing listens there: the delivery rows are what this checks)
    const hook = await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { webhook_url: 'https://127.0.0.1:9/agw', webhook_events: ['anomaly.detected', 'session.interrupted'] } });
    expect(hook.status).toBe(200);
    const s = await session(a, cfg.id);
    const { results } = await script(s.anthropic_session_id, [
      { tool_use: { name: 'bash', input: { command: 'ls' } } },
      { tool_use: { name: 'bash', input: { command: 'rm -rf / --no-preserve-root' } } },
      { wait_ms: 1500 },
      { mcp_call: { tool: 'svc_web_search', arguments: { method: 'search', params: { q: 'more' } } } },
    ]);
    const st = await until('auto-interrupt', () => status(a, s.session_id), (x) => x.status === 'interrupted');
    expect(st.ended_at).toEqual(expect.any(String));
    const platform = await standIn('GET', `/_stand-in/sessions/${s.anthropic_session_id}`);
    expect(platform.interrupts.length).toBeGreaterThanOrEqual(1);
    expect(results[3] === 'skipped' || results[3]?.skipped || results[3]?.isError || results[3]?.error).toBeTruthy();
    const audit = (await api('GET', `/managed/sessions/${s.session_id}/audit`, { key: a.apiKey })).body.records;
    const danger = audit.find((r: any) => r.source === 'mcp_observed' && r.severity === 'high');
    expect(danger.violations).toContain('anomaly_recursive_delete_root');
    expect(audit.at(-1)).toMatchObject({ tool: 'managed_session', method: 'interrupt', source: 'control_plane', violations: ['session_auto_interrupted'] });
    const comp = (await api('GET', `/managed/sessions/${s.session_id}/compliance`, { key: a.apiKey })).body;
    expect(comp.summary.anomalies_detected).toBe(1);
    const again = await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'again' } });
    expect(again.status).toBe(409);
    // a call to the interrupted session's MCP server is refused
    const mcp = await fetch(s.mcp_server_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    await recordRaw('POST', s.mcp_server_url, mcp);
    expect(mcp.status).toBe(409);
    const deliveries = await until(
      'webhook deliveries',
      () => api('GET', '/webhooks/deliveries?limit=100', { key: a.apiKey }).then((r) => r.body.deliveries as any[]),
      (d) => d.some((x) => x.event === 'anomaly.detected') && d.some((x) => x.event === 'session.interrupted'),
    );
    const anomaly = deliveries.find((x) => x.event === 'anomaly.detected');
    expect(anomaly.action_id).toBe(danger.action_id);
    expect(deliveries.find((x) => x.event === 'session.interrupted').action_id).toBe(audit.at(-1).action_id);
    await api('PATCH', '/dashboard/settings', { key: a.apiKey, body: { webhook_url: null } });
  });

  it('interrupts by request (user.interrupt, audit record, 409 the second time) and validates the body', async () => {
    const s = await session(a, cfg.id);
    expect((await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: {} })).status).toBe(422);
    expect((await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: { reason: '' } })).body.detail[0].loc).toEqual(['body', 'reason']);
    expect((await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'x'.repeat(1001) } })).status).toBe(422);
    expect((await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: b.apiKey, body: { reason: 'not yours' } })).status).toBe(404);
    const r = await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'operator stop' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'interrupted', session_id: s.session_id, reason: 'operator stop', auto_triggered: false });
    expect(r.body.audit_action_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(r.body.interrupted_at)).toBeGreaterThan(0);
    expect((await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'again' } })).status).toBe(409);
    const platform = await until('user.interrupt', () => standIn('GET', `/_stand-in/sessions/${s.anthropic_session_id}`), (p: any) => p.interrupts.length === 1);
    expect(platform.interrupts).toHaveLength(1);
    const audit = (await api('GET', `/managed/sessions/${s.session_id}/audit`, { key: a.apiKey })).body.records;
    expect(audit.find((x: any) => x.action_id === r.body.audit_action_id)).toMatchObject({ method: 'interrupt', source: 'control_plane' });
    const list = await api('GET', `/managed/sessions?status=interrupted&agent_id=${cfg.id}`, { key: a.apiKey });
    expect(list.body.sessions.map((x: any) => x.id)).toContain(s.session_id);
    expect(list.body.sessions.every((x: any) => x.status === 'interrupted' && x.agent_id === cfg.id)).toBe(true);
    expect(list.body.sessions[0]).toEqual(expect.objectContaining({ total_governed_calls: expect.any(Number), total_observed_calls: expect.any(Number), total_denied: expect.any(Number), total_pending: expect.any(Number), created_at: expect.any(String) }));
  });

  it('follows the platform: end_turn completes a session, a terminated session fails', async () => {
    const done = await session(a, cfg.id);
    await script(done.anthropic_session_id, [{ message: 'All done' }, { idle: 'end_turn' }]);
    expect((await until('completed', () => status(a, done.session_id), (x) => x.status !== 'active')).status).toBe('completed');
    const dead = await session(a, cfg.id);
    await script(dead.anthropic_session_id, [{ error: 'unknown_error' }, { terminate: true }]);
    expect((await until('failed', () => status(a, dead.session_id), (x) => x.status !== 'active')).status).toBe('failed');
    // an ended session cannot be interrupted
    expect((await api('POST', `/managed/sessions/${done.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'late' } })).status).toBe(409);
  });

  it('keeps tenants apart: another tenant’s session is a 404 on every route and on its MCP server', async () => {
    const s = await session(a, cfg.id);
    for (const [method, path] of [
      ['GET', 'status'],
      ['GET', 'audit'],
      ['GET', 'compliance'],
      ['POST', 'replay'],
    ] as const) {
      expect((await api(method, `/managed/sessions/${s.session_id}/${path}`, { key: b.apiKey })).status).toBe(404);
    }
    expect((await api('GET', '/managed/sessions', { key: b.apiKey })).body.sessions.map((x: any) => x.id)).not.toContain(s.session_id);
    expect((await api('GET', '/managed/consumers', { key: b.apiKey })).body.consumers.map((x: any) => x.session_id)).not.toContain(s.session_id);
    expect((await api('POST', '/managed/sessions', { key: b.apiKey, body: { agent_id: cfg.id } })).status).toBe(404);
    const mcp = await fetch(s.mcp_server_url, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    await recordRaw('POST', s.mcp_server_url, mcp);
    expect(mcp.status).toBe(404);
    await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: a.apiKey, body: { reason: 'cleanup' } });
  });

  it('answers bad input with 422 and a precise loc, never 500', async () => {
    const cases: Array<[string, string, unknown, unknown[]]> = [
      ['POST', '/managed/sessions', {}, ['body', 'agent_id']],
      ['POST', '/managed/sessions', { agent_id: 5 }, ['body', 'agent_id']],
      ['POST', '/managed/sessions', { agent_id: cfg.id, user_message: 42 }, ['body', 'user_message']],
      ['POST', '/managed/sessions', { agent_id: cfg.id, metadata: 'x' }, ['body', 'metadata']],
      ['POST', '/managed/sessions', { agent_id: cfg.id, extra: 1 }, ['body', 'extra']],
      ['GET', '/managed/sessions?status=paused', undefined, ['query', 'status']],
      ['GET', `/managed/sessions/00000000-0000-4000-8000-000000000000/audit?limit=0`, undefined, ['query', 'limit']],
    ];
    for (const [method, path, body, loc] of cases) {
      const r = await api(method, path, { key: a.apiKey, body });
      expect([r.status, path]).toEqual([422, path]);
      expect(r.body.detail.map((d: any) => d.loc)).toContainEqual(loc);
    }
    expect((await api('POST', '/managed/sessions', { key: a.apiKey, body: { agent_id: '00000000-0000-4000-8000-000000000000' } })).status).toBe(404);
    expect((await api('POST', '/managed/sessions', { key: a.apiKey, rawBody: '{"agent_id":' })).status).toBe(422);
    expect((await api('GET', '/managed/sessions/not-a-uuid/status', { key: a.apiKey })).status).toBe(404);
    expect((await api('POST', '/managed/sessions', { body: { agent_id: cfg.id } })).status).toBe(401);
  });
});

describe('managed session limits', () => {
  it('429 past the concurrent and daily tenant limits (3 and 6 in the e2e fleet) and past max_daily_sessions of a config', async () => {
    const t = await newTenant('Limits');
    const c = await config(t, { name: 'busy' });
    const first = [await session(t, c.id), await session(t, c.id), await session(t, c.id)];
    const over = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: c.id } });
    expect(over.status).toBe(429);
    expect(over.body.detail).toMatch(/Concurrent session limit exceeded/);
    for (const s of first) await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: t.apiKey, body: { reason: 'make room' } });
    const second = [await session(t, c.id), await session(t, c.id), await session(t, c.id)];
    for (const s of second) await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: t.apiKey, body: { reason: 'make room' } });
    const daily = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: c.id } });
    expect(daily.status).toBe(429);
    expect(daily.body.detail).toMatch(/Daily session limit exceeded/);

    const u = await newTenant('Per agent');
    const once = await config(u, { name: 'once-a-day', max_daily_sessions: 1 });
    const s = await session(u, once.id);
    const again = await api('POST', '/managed/sessions', { key: u.apiKey, body: { agent_id: once.id } });
    expect(again.status).toBe(429);
    expect(again.body.detail).toMatch(/Per-agent session limit exceeded/);
    await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: u.apiKey, body: { reason: 'done' } });
  });
});

describe('managed session consumer across a restart of services/managed', () => {
  it('resumes the session’s stream, records what happened while it was down, and duplicates nothing', async () => {
    const t = await newTenant('Restart');
    const c = await config(t, { name: 'survivor' });
    const s = await session(t, c.id);
    await script(s.anthropic_session_id, [{ tool_use: { name: 'bash', input: { command: 'echo one' } } }, { tool_use: { name: 'bash', input: { command: 'echo two' } } }]);
    await until('two observed', () => status(t, s.session_id), (x) => x.total_observed_calls === 2);
    await fleet('stop', 'managed');
    await script(s.anthropic_session_id, [{ tool_use: { name: 'bash', input: { command: 'echo three' } } }, { tool_use: { name: 'read', input: { file_path: 'notes.md' } } }]);
    await fleet('start', 'managed');
    const st = await until('four observed', () => status(t, s.session_id), (x) => x.total_observed_calls === 4, 30_000);
    expect(st.status).toBe('active');
    await new Promise((r) => setTimeout(r, 1500));
    const records = (await api('GET', `/managed/sessions/${s.session_id}/audit`, { key: t.apiKey })).body.records;
    expect(records.filter((r: any) => r.source === 'mcp_observed')).toHaveLength(4);
    expect(new Set(records.map((r: any) => r.action_id)).size).toBe(records.length);
    expect((await api('GET', '/audit/verify', { key: t.apiKey })).body.valid).toBe(true);
    await api('POST', `/managed/sessions/${s.session_id}/interrupt`, { key: t.apiKey, body: { reason: 'done' } });
  });
});
