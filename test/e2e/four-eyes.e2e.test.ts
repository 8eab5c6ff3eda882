/**
 * Four-eyes approvals (docs/auth.md, "Four-eyes approvals") through the running fleet: a tenant with an owner
 * and two approvers (invited through the members API, accepted, signed in) and an auditor. A large transfer
 * (the financial template with approval_required_approvers 2, or the tenant setting required_approvers 2) waits
 * for two distinct approvers: the initiator's own approval is refused (403), the first approval leaves it
 * pending (202, the upstream not called), the same member again is a 409, the second approval executes it
 * (the brokered upstream is called exactly once); a rejection by either approver ends it; every vote is a
 * control_plane record naming the member, and the final record names both approvers. The two-replica case
 * (two approvals at once on two gateways) is in replicas.e2e.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFixtures } from '@agw/mcp-fixtures';
import { type Tenant, api, humanSession, invitedMember, newTenant, toolCall } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

jest.setTimeout(120_000);

const PASSWORD = 'correct-horse-battery-staple';
const hits: Array<{ url: string; action: string | undefined; body: string }> = [];
let server: http.Server;
let upstream: string;
let t: Tenant;
let ownerToken: string;
let agentKey: string;
let alice: { token: string; id: string; email: string };
let bob: { token: string; id: string; email: string };
let auditor: { token: string; id: string; email: string };
let bank: string;

const member = (role: string, name: string) => invitedMember({ token: ownerToken }, role, `${name}-${randomUUID()}@four-eyes.test`, PASSWORD);

const hitsFor = (actionId: string) => hits.filter((h) => h.action === actionId);
const transfer = (amount: number) => api('POST', '/mcp/tools/call', { key: agentKey, body: toolCall({ agent_id: 'treasury-agent', tool: bank, method: 'transfer', params: { amount, currency: 'EUR', iban: 'DE89370400440532013000' } }) });
const approve = (who: { token: string }, id: string, note?: string) => api('POST', `/approve/${id}`, { token: who.token, body: note ? { note } : {} });
const pendingItem = async (id: string) => (await api('GET', '/approvals', { token: ownerToken })).body.pending.find((p: { action_id: string }) => p.action_id === id);

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ url: req.url ?? '', action: req.headers['x-agw-action-id'] as string | undefined, body: Buffer.concat(chunks).toString() });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ transferred: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await newTenant('Four eyes');
  ownerToken = await humanSession(t);
  alice = await member('approver', 'alice');
  bob = await member('approver', 'bob');
  auditor = await member('auditor', 'carol');
  // the agent's key, issued by the owner: the owner is the initiator of what the key does
  const key = await api('POST', '/api-keys', { token: ownerToken, body: { scope: 'agent', name: 'treasury-agent' } });
  expect(key.status).toBe(201);
  agentKey = key.body.api_key;
  bank = `bank_${randomUUID().slice(0, 8)}`;
  expect((await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: bank, name: 'bank', value: `sk-${randomBytes(12).toString('hex')}`, credential_type: 'bearer', upstream_url: `${upstream}/transfer` } })).status).toBe(201);
  // a transfer of 1000 or more needs a human; the policy asks for two of them
  const policy = await api('PATCH', '/dashboard/settings', { token: ownerToken, body: { policy_template: 'financial', policy_config: { approval_required_approvers: 2, business_hours_only: false, transaction_limit: 1_000_000 } } });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe('a large transfer waits for two approvers', () => {
  it('refuses the initiator, keeps the first approval pending (upstream not called), refuses a second vote of the same member, executes once on the second approver', async () => {
    const q = await transfer(250_000);
    expect(q.status).toBe(202);
    const id = q.body.action_id as string;
    expect(await pendingItem(id)).toMatchObject({ required_approvers: 2, approvals: [] });

    const own = await approve({ token: ownerToken }, id);
    expect(own.status).toBe(403);
    expect(own.body.detail).toBe(`${t.email} started action ${id} (its session, API key or OAuth grant made the call): the initiator of an action never counts as its approver (four eyes); 2 other members must approve it`);
    // the tenant key is no member: it cannot count either
    const byKey = await api('POST', `/approve/${id}`, { key: t.apiKey, body: {} });
    expect(byKey.status).toBe(403);

    const first = await approve(alice, id, 'checked the invoice');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ status: 'pending', action_id: id, required: 2, approvals: [{ member_id: alice.id, email: alice.email, approved_at: expect.any(String) }] });
    expect(hitsFor(id)).toHaveLength(0);
    expect(await pendingItem(id)).toMatchObject({ required_approvers: 2, approvals: [{ member_id: alice.id, email: alice.email }] });
    expect((await api('GET', `/actions/${id}`, { key: agentKey })).body).toMatchObject({ status: 'pending', required_approvers: 2, approval_count: 1 });

    const again = await approve(alice, id);
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(`${alice.email} approved action ${id} already`);
    expect(hitsFor(id)).toHaveLength(0);

    const second = await approve(bob, id);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ status: 'approved', action_id: id, execution_mode: 'gateway_brokered', execution_result: { status_code: 200 } });
    expect(hitsFor(id)).toHaveLength(1);
    expect((await approve({ token: ownerToken }, id)).status).toBe(409);
    expect(hitsFor(id)).toHaveLength(1);

    const history = (await api('GET', '/approvals/history', { token: ownerToken })).body.history.find((h: { action_id: string }) => h.action_id === id);
    expect(history).toMatchObject({ status: 'approved', required_approvers: 2, approvals: [{ member_id: alice.id }, { member_id: bob.id }] });

    // each vote is its own record naming the member (its e-mail pseudonymised); the final record names both
    const log = (await api('GET', '/audit/log?limit=50', { token: auditor.token })).body.records.filter((r: { action_id: string }) => r.action_id === id);
    const votes = log.filter((r: any) => r.source === 'control_plane' && r.details.approval === 'vote');
    expect(votes.map((r: any) => r.details.member.id).sort()).toEqual([alice.id, bob.id].sort());
    for (const v of votes) expect(v.details.member.email).toEqual({ $pii: expect.anything() });
    const final = log.filter((r: any) => r.source === 'control_plane' && r.details.approval === 'approved');
    expect(final).toHaveLength(1);
    expect(final[0]).toMatchObject({ decision: 'allow', execution_mode: 'gateway_brokered', details: { required_approvers: 2 } });
    expect(final[0].details.approvers.map((a: { id: string }) => a.id)).toEqual([alice.id, bob.id]);
    expect(JSON.stringify(log)).not.toContain(alice.email);
    expect(JSON.stringify(log)).not.toContain(bob.email);
  });

  it('ends with one rejection by either approver; nothing runs', async () => {
    for (const [yes, no] of [
      [alice, bob],
      [bob, alice],
    ]) {
      const q = await transfer(120_000);
      expect(q.status).toBe(202);
      const id = q.body.action_id as string;
      expect((await approve(yes, id)).status).toBe(202);
      const rejected = await api('POST', `/reject/${id}`, { token: no.token, body: { reason: 'not this month' } });
      expect(rejected.status).toBe(200);
      expect(rejected.body).toMatchObject({ status: 'rejected', action_id: id });
      expect((await approve({ token: ownerToken }, id)).status).toBe(409);
      expect(hitsFor(id)).toHaveLength(0);
    }
  });

  it('the tenant setting required_approvers asks for two as well (the stricter source applies)', async () => {
    expect((await api('PATCH', '/dashboard/settings', { token: ownerToken, body: { policy_config: { approval_required_approvers: 1, business_hours_only: false, transaction_limit: 1_000_000 }, required_approvers: 2 } })).body).toMatchObject({ required_approvers: 2 });
    const q = await transfer(5_000);
    expect(q.status).toBe(202);
    const id = q.body.action_id as string;
    expect(await pendingItem(id)).toMatchObject({ required_approvers: 2 });
    expect((await approve(bob, id)).status).toBe(202);
    expect((await approve(alice, id)).status).toBe(200);
    expect(hitsFor(id)).toHaveLength(1);
    // back to one approver: the owner's session decides alone again
    expect((await api('PATCH', '/dashboard/settings', { token: ownerToken, body: { required_approvers: 1 } })).status).toBe(200);
    const one = await transfer(5_000);
    expect(await pendingItem(one.body.action_id)).toMatchObject({ required_approvers: 1, approvals: [] });
    expect((await approve(alice, one.body.action_id)).status).toBe(200);
  });
});

describe('the audit names people', () => {
  it('records settings, policy, key and member changes with the member (id, pseudonymised e-mail); an auditor filters by member', async () => {
    const owner = (await api('GET', '/auth/me', { token: ownerToken })).body;
    const ownerId = owner.user_id ?? owner.id;
    expect((await api('PATCH', '/dashboard/settings', { token: ownerToken, body: { approval_expiry_seconds: 7200 } })).status).toBe(200);
    const changes = (await api('GET', '/audit/log?limit=200', { token: auditor.token })).body.records.filter((r: any) => r.source === 'control_plane' && r.decision === 'changed');
    // the policy change and the setting change of this file, the agent key, the invitations: each names the owner
    expect(changes.map((r: any) => `${r.tool} ${r.details.change}`)).toEqual(expect.arrayContaining(['settings settings', 'policy settings', 'api_keys api_key_issued', 'members member_invited']));
    for (const r of changes.filter((c: any) => c.details.member)) expect(r.details.member).toEqual({ id: ownerId, email: { $pii: expect.anything() } });
    expect(JSON.stringify(changes)).not.toContain(t.email);
    expect(changes.find((r: any) => r.details.keys?.includes('approval_expiry_seconds'))).toMatchObject({ tool: 'settings', details: { keys: ['approval_expiry_seconds'] } });

    // alice's records: her votes and the approvals she took part in, nothing else
    const mine = await api('GET', `/audit/log?member=${alice.id}&limit=1000`, { token: auditor.token });
    expect(mine.status).toBe(200);
    expect(mine.body.records.length).toBeGreaterThanOrEqual(4);
    for (const r of mine.body.records) expect(r.details.member?.id === alice.id || r.details.approvers?.some((a: { id: string }) => a.id === alice.id)).toBe(true);
    const ownerRecords = (await api('GET', `/audit/log?member=${ownerId}`, { token: auditor.token })).body.records;
    expect(ownerRecords.every((r: any) => r.details.member?.id === ownerId)).toBe(true);
    expect(ownerRecords.length).toBeGreaterThanOrEqual(5);
    const bad = await api('GET', '/audit/log?member=alice', { token: auditor.token });
    expect(bad.status).toBe(422);
  });
});

describe('MCP approvals go through the same queue', () => {
  it('a custom policy asks for two approvers of an MCP call (Tasks extension): the task keeps working after one approval and completes after the second', async () => {
    const fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
    try {
      expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
      const policy = ['package agw.custom', '', 'import rego.v1', '', 'approval contains {"id": "large sums need two humans", "required_approvers": 2} if {', '  input.method == "add"', '  input.params.a > 1000', '}', ''].join('\n');
      expect((await api('PATCH', '/dashboard/settings', { token: ownerToken, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
      const TASKS = 'io.modelcontextprotocol/tasks';
      const mcp = async (method: string, params: Record<string, unknown>) => {
        const name = (params.name ?? params.taskId) as string | undefined;
        const res = await fetch(`${E2E_BASE_URL}/mcp/server`, {
          method: 'POST',
          headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } } } }),
        });
        return (await res.json()) as any;
      };
      const created = await mcp('tools/call', { name: 'fx__add', arguments: { a: 4000, b: 2 } });
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = created.result.taskId as string;
      expect(await pendingItem(taskId)).toMatchObject({ required_approvers: 2, initiator_member_ids: [expect.any(String)] });
      expect((await approve({ token: ownerToken }, taskId)).status).toBe(403);
      expect((await approve(alice, taskId)).status).toBe(202);
      expect((await mcp('tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'working' });
      expect((await approve(bob, taskId)).status).toBe(200);
      expect((await mcp('tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'completed', result: { content: [{ type: 'text', text: '4002' }] } });
    } finally {
      await fixtures.close();
    }
  });
});
