/**
 * Platform-native approvals of managed sessions (docs/managed.md, "Tools that ask a human"), through the
 * public API against the fleet and the platform stand-in: a tool a require_human_approval pattern matches is
 * `always_ask` on the platform, the platform stops before it runs (`requires_action`), the managed service
 * brings the request to the tenant's approval queue, and the human decision (or the expiry) goes back as
 * `user.tool_confirmation`. The Chromium case (a human approves in the console) is in
 * test/browser/managed-approvals.browser.test.ts.
 */
import { type Db, createDb } from '@agw/shared';
import { type Tenant, api, eventually, humanSession, newTenant } from './support/api';
import { E2E_DATABASE_URL } from './support/e2e-env';
import { script, standIn } from './support/stand-in';

jest.setTimeout(120_000);

let db: Db;
beforeAll(() => {
  db = createDb(E2E_DATABASE_URL);
});
afterAll(() => db.destroy());

interface Setup {
  t: Tenant;
  human: string;
  agentId: string;
}

async function tenantWithAgent(name: string): Promise<Setup> {
  const t = await newTenant(name);
  const human = await humanSession(t);
  const cfg = await api('POST', '/managed/agents', {
    key: t.apiKey,
    body: { name: 'mailer', allowed_tools: ['svc_web_search', 'svc_send_email', 'svc_payments'], require_human_approval: ['svc_send_*', 'svc_payments'] },
  });
  expect(cfg.status).toBe(200);
  return { t, human, agentId: cfg.body.id };
}

async function startSession(s: Setup): Promise<{ session_id: string; anthropic_session_id: string }> {
  const r = await api('POST', '/managed/sessions', { key: s.t.apiKey, body: { agent_id: s.agentId, user_message: 'E-mail the customer' } });
  expect(r.status).toBe(200);
  return r.body;
}

const EMAIL = { method: 'send', params: { to: 'jane@example.com', subject: 'Your order', body: 'It shipped today.' } };

/** The approval-queue item of a session's confirmation request, once the managed service queued it. */
const queued = (s: Setup, sessionId: string) =>
  eventually(async () => (await api('GET', '/approvals', { token: s.human })).body.pending.find((p: any) => p.session_id === sessionId && p.queue_reason === 'platform_confirmation'));

const platformSession = (id: string) => standIn('GET', `/_stand-in/sessions/${id}`);
const confirmationSent = (platformId: string, toolUseId: string) =>
  eventually(async () => (await platformSession(platformId)).events.find((e: any) => e.type === 'user.tool_confirmation' && e.tool_use_id === toolUseId));
const textOf = (r: any) => (r?.content ?? []).map((c: any) => c.text).join('\n');
const sessionAudit = async (s: Setup, id: string) => (await api('GET', `/managed/sessions/${id}/audit`, { key: s.t.apiKey })).body.records as any[];
/**
 * Every record of one action, with its details, in chain order, once there are `n` (the confirmation's
 * record is appended right after the platform got it, so it may trail the agent's result by a moment).
 */
const trailOf = (s: Setup, actionId: string, n: number) =>
  eventually(async () => {
    const all = ((await api('GET', '/audit/log?limit=1000', { key: s.t.apiKey })).body.records as any[]).filter((r) => r.action_id === actionId).sort((x, y) => x.id - y.id);
    return all.length >= n && all;
  });

/** A tools/call on the session's MCP server, as anyone holding the session's bearer could send it. */
async function mcpCall(s: Setup, sessionId: string, name: string, args: unknown) {
  const r = await api('POST', `/mcp/server/sessions/${sessionId}`, {
    key: s.t.apiKey,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
  expect(r.status).toBe(200);
  return r.body.result;
}

// each case has its own tenant: the e2e fleet allows 3 concurrent and 6 daily sessions per tenant
describe('platform-native approvals of managed sessions', () => {
  let a: Setup;
  beforeEach(async () => {
    a = await tenantWithAgent('Platform approvals');
  });

  it('a session pauses on an always_ask tool, a human approves through the API, the platform resumes, the call runs once and the session completes', async () => {
    // a webhook subscriber of action.pending (nothing listens there: the delivery row is what this checks)
    expect((await api('PATCH', '/dashboard/settings', { key: a.t.apiKey, body: { webhook_url: 'https://127.0.0.1:9/agw-hook', webhook_events: ['action.pending'] } })).status).toBe(200);
    const s = await startSession(a);
    const platform = await platformSession(s.anthropic_session_id);
    const toolset = platform.agent.tools.find((x: any) => x.type === 'mcp_toolset');
    expect(toolset.default_config.permission_policy).toEqual({ type: 'always_allow' });
    expect(toolset.configs.map((c: any) => [c.name, c.permission_policy.type])).toEqual([
      ['svc_payments', 'always_ask'],
      ['svc_send_email', 'always_ask'],
    ]);

    const running = script(s.anthropic_session_id, [
      { mcp_call: { tool: 'svc_web_search', arguments: { method: 'search', params: { q: 'order status' } } } },
      { mcp_call: { tool: 'svc_send_email', arguments: EMAIL } },
      { message: 'E-mailed the customer.' },
      { idle: 'end_turn' },
    ]);
    const item = await queued(a, s.session_id);
    expect(item).toMatchObject({ tool: 'svc_send_email', method: 'send', agent_id: a.agentId, platform_tool_use_id: expect.stringMatching(/^sevt_/) });
    expect(item.opa_result).toMatchObject({ requires_human: true, violations: expect.arrayContaining(['session_requires_human_approval']) });
    expect(JSON.stringify(item.params)).not.toContain('jane@example.com'); // personal data as an encrypted envelope
    expect(JSON.stringify(item.params)).toContain('Your order');
    // the queue filtered by reason: a reviewer finds a session's held calls ahead of a long policy queue
    const byReason = async (reason: string) => api('GET', `/approvals?queue_reason=${reason}`, { token: a.human });
    expect((await byReason('platform_confirmation')).body.pending.map((p: any) => p.action_id)).toEqual([item.action_id]);
    expect((await byReason('policy')).body).toEqual({ pending: [], total: 0 });
    expect((await api('GET', `/approvals?action_id=${item.action_id.toUpperCase()}`, { token: a.human })).body).toMatchObject({ pending: [{ action_id: item.action_id }], total: 1 });
    const notAnId = await api('GET', '/approvals?action_id=42', { token: a.human });
    expect(notAnId.status).toBe(422);
    expect(JSON.stringify(notAnId.body)).toContain('action_id must be a UUID');
    const unknown = await byReason('whim');
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body)).toContain('queue_reason');
    expect(await eventually(async () => (await api('GET', `/webhooks/deliveries?action_id=${item.action_id}`, { key: a.t.apiKey })).body.deliveries?.[0])).toMatchObject({ event: 'action.pending' });
    // the platform waits: idle, requires_action naming the tool use
    const waiting = await platformSession(s.anthropic_session_id);
    expect(waiting.status).toBe('idle');
    expect(waiting.events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [item.platform_tool_use_id] } });
    // the session is active and its call counts as pending
    expect((await api('GET', `/managed/sessions/${s.session_id}/status`, { key: a.t.apiKey })).body).toMatchObject({ status: 'active', total_pending: 1 });

    const decided = await api('POST', `/approve/${item.action_id}`, { token: a.human, body: { note: 'fine' } });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: 'approved', action_id: item.action_id });
    expect(decided.body.execution_result).toBeUndefined(); // the platform runs it, not the approval

    const { results } = await running;
    expect(JSON.parse(textOf(results[1]))).toMatchObject({ status: 'allowed', action_id: item.action_id });
    expect(await confirmationSent(s.anthropic_session_id, item.platform_tool_use_id)).toMatchObject({ result: 'allow' });
    await eventually(async () => (await api('GET', `/managed/sessions/${s.session_id}/status`, { key: a.t.apiKey })).body.status === 'completed');

    // the trail: queued, decided by a human, confirmation sent, executed once, all under the action id
    const trail = await trailOf(a, item.action_id, 4);
    expect(trail.every((r) => r.session_id === s.session_id)).toBe(true);
    expect(trail.map((r) => [r.source, r.decision, r.details.stage ?? r.details.approval])).toEqual([
      ['mcp_governed', 'requires_human', 'platform_confirmation'],
      ['control_plane', 'allow', 'approved'],
      ['control_plane', 'allow', 'tool_confirmation'],
      ['mcp_governed', 'allow', 'approved_confirmation'],
    ]);
    expect(trail[3].details).toMatchObject({ approved_action_id: item.action_id, platform_tool_use_id: item.platform_tool_use_id });
    const compliance = (await api('GET', `/managed/sessions/${s.session_id}/compliance`, { key: a.t.apiKey })).body;
    expect(compliance.summary).toMatchObject({ approvals_used: 1, pending: 0 });
    expect(compliance.timeline.filter((e: any) => e.action_id === item.action_id)).toHaveLength(4);
    expect((await api('GET', `/actions/${item.action_id}`, { key: a.t.apiKey })).body).toMatchObject({ status: 'approved', retry_allowed: false });
    expect((await api('GET', '/audit/verify', { key: a.t.apiKey })).body.valid).toBe(true);
  });

  it('a reject is answered deny with the reviewer’s note; the tool never runs', async () => {
    const s = await startSession(a);
    const running = script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_send_email', arguments: EMAIL } }]);
    const item = await queued(a, s.session_id);
    expect((await api('POST', `/reject/${item.action_id}`, { token: a.human, body: { note: 'not to this customer' } })).status).toBe(200);
    const { results } = await running;
    expect(results[0]).toMatchObject({ isError: true, confirmation: 'deny' });
    expect(textOf(results[0])).toBe('The user denied this tool call: Rejected by a reviewer: not to this customer');
    expect(await confirmationSent(s.anthropic_session_id, item.platform_tool_use_id)).toMatchObject({ result: 'deny', deny_message: 'Rejected by a reviewer: not to this customer' });
    const trail = await trailOf(a, item.action_id, 3);
    expect(trail.map((r) => [r.source, r.decision])).toEqual([
      ['mcp_governed', 'requires_human'],
      ['control_plane', 'deny'],
      ['control_plane', 'deny'],
    ]);
    expect(trail.some((r) => r.decision === 'allow')).toBe(false);
  });

  it('a call the policy denies is answered deny at once with the violations and never reaches a human', async () => {
    // the financial template denies large transfers
    expect((await api('PATCH', '/dashboard/settings', { key: a.t.apiKey, body: { policy_template: 'financial', policy_config: { business_hours_only: false } } })).status).toBe(200);
    const s = await startSession(a);
    const { results } = await script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_payments', arguments: { method: 'transfer', params: { amount: 9000, currency: 'EUR' } } } }]);
    expect(results[0]).toMatchObject({ isError: true, confirmation: 'deny' });
    expect(textOf(results[0])).toMatch(/Denied by the tenant's policy \(.*transaction_exceeds_limit.*\)/);
    const all = [...(await api('GET', '/approvals', { token: a.human })).body.pending, ...(await api('GET', '/approvals/history', { token: a.human })).body.history];
    expect(all.filter((p: any) => p.session_id === s.session_id)).toEqual([]);
    const records = await eventually(async () => {
      const mine = ((await api('GET', '/audit/log?limit=1000', { key: a.t.apiKey })).body.records as any[]).filter((r) => r.session_id === s.session_id);
      return mine.some((r) => r.method === 'tool_confirmation') && mine;
    });
    const denial = records.find((r) => r.source === 'mcp_governed');
    expect(denial).toMatchObject({ tool: 'svc_payments', method: 'transfer', decision: 'deny', violations: expect.arrayContaining(['transaction_exceeds_limit']), details: { stage: 'platform_confirmation' } });
    expect(records.find((r) => r.method === 'tool_confirmation')).toMatchObject({ action_id: denial.action_id, decision: 'deny', details: { reason: 'policy_deny' } });
    expect((await api('GET', `/managed/sessions/${s.session_id}/status`, { key: a.t.apiKey })).body).toMatchObject({ total_denied: 1, total_pending: 0 });
  });

  it('an unanswered request expires after the tenant’s approval expiry: the session is told deny', async () => {
    const t = a;
    expect((await api('PATCH', '/dashboard/settings', { key: t.t.apiKey, body: { approval_expiry_seconds: 600 } })).status).toBe(200);
    const s = await startSession(t);
    const running = script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_send_email', arguments: EMAIL } }]);
    const item = await queued(t, s.session_id);
    expect(Date.parse(item.expires_at) - Date.parse(item.queued_at)).toBe(600_000);
    // The fleet's clock cannot be set from here: the due time is moved to the past, which is what the clock
    // passing it means; a late decision then expires it on the spot (as the sweep would).
    await db.updateTable('approvals').set({ expires_at: new Date(Date.now() - 1000) }).where('tenant_id', '=', t.t.tenantId).where('action_id', '=', item.action_id).execute();
    expect((await api('POST', `/approve/${item.action_id}`, { token: t.human })).status).toBe(409);
    const { results } = await running;
    expect(results[0]).toMatchObject({ isError: true, confirmation: 'deny' });
    expect(textOf(results[0])).toMatch(/the approval expired/);
    const trail = await trailOf(t, item.action_id, 3);
    expect(trail.map((r) => [r.source, r.decision, r.details.approval ?? r.details.reason])).toEqual([
      ['mcp_governed', 'requires_human', undefined],
      ['control_plane', 'deny', 'expired'],
      ['control_plane', 'deny', 'expired'],
    ]);
  });

  it('after an approval, a replayed or modified call is governed as a new call, not waved through', async () => {
    const s = await startSession(a);
    const running = script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_send_email', arguments: EMAIL } }]);
    const item = await queued(a, s.session_id);
    expect((await api('POST', `/approve/${item.action_id}`, { token: a.human })).status).toBe(200);
    const { results } = await running;
    expect(JSON.parse(textOf(results[0]))).toMatchObject({ status: 'allowed', action_id: item.action_id });

    // the same call again, straight at the session's MCP server: the approval was used, so it is queued anew
    const replayed = await mcpCall(a, s.session_id, 'svc_send_email', EMAIL);
    expect(textOf(replayed)).toMatch(/^Action [0-9a-f-]{36} requires human approval and is queued/);
    expect(textOf(replayed)).not.toContain(item.action_id);
    // a modified call (another recipient) is a new call too
    const modified = await mcpCall(a, s.session_id, 'svc_send_email', { ...EMAIL, params: { ...EMAIL.params, to: 'mallory@example.com' } });
    expect(textOf(modified)).toMatch(/requires human approval and is queued/);
    const allowed = (await sessionAudit(a, s.session_id)).filter((r) => r.source === 'mcp_governed' && r.decision === 'allow');
    expect(allowed.map((r) => r.action_id)).toEqual([item.action_id]);
  });

  it('an approval binds its own session: the same call from another session does not take it', async () => {
    const t = a;
    const s = await startSession(t);
    const other = await startSession(t);
    const running = script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_send_email', arguments: EMAIL } }]);
    const item = await queued(t, s.session_id);
    // the platform ends the session before anyone decides: the approval will never be used by it
    await script(s.anthropic_session_id, [{ terminate: true }]);
    expect((await running).results[0]).toMatchObject({ confirmation: 'deny' });
    await eventually(async () => (await api('GET', `/managed/sessions/${s.session_id}/status`, { key: t.t.apiKey })).body.status === 'failed');
    expect((await api('POST', `/approve/${item.action_id}`, { token: t.human })).status).toBe(200);
    // the same tool, method and params from another session of the same agent: governed on its own
    expect(textOf(await mcpCall(t, other.session_id, 'svc_send_email', EMAIL))).toMatch(/requires human approval and is queued/);
    const log = (await api('GET', '/audit/log?limit=1000', { key: t.t.apiKey })).body.records as any[];
    expect(log.filter((r) => r.action_id === item.action_id && r.decision === 'allow' && r.source === 'mcp_governed')).toEqual([]);
  });

  it('queued items are the tenant’s own: another tenant neither sees nor decides them', async () => {
    const b = await tenantWithAgent('Platform approvals other tenant');
    const s = await startSession(a);
    const running = script(s.anthropic_session_id, [{ mcp_call: { tool: 'svc_send_email', arguments: EMAIL } }]);
    const item = await queued(a, s.session_id);
    expect((await api('GET', '/approvals', { token: b.human })).body.pending.map((p: any) => p.action_id)).not.toContain(item.action_id);
    expect((await api('POST', `/approve/${item.action_id}`, { token: b.human })).status).toBe(404);
    expect((await api('POST', `/reject/${item.action_id}`, { token: b.human })).status).toBe(404);
    expect((await api('GET', `/actions/${item.action_id}`, { key: b.t.apiKey })).status).toBe(404);
    expect((await api('GET', `/managed/sessions/${s.session_id}/audit`, { key: b.t.apiKey })).status).toBe(404);
    // still pending for its tenant, and the platform still waits
    expect((await api('GET', `/actions/${item.action_id}`, { key: a.t.apiKey })).body.status).toBe('pending');
    expect((await platformSession(s.anthropic_session_id)).status).toBe('idle');
    expect((await api('POST', `/reject/${item.action_id}`, { token: a.human })).status).toBe(200);
    await running;
  });
});
