/**
 * Approvals a standard MCP client can wait for (docs/mcp.md, "Approvals over MCP"), through a running fleet:
 * - the official SDK v2 client (`@modelcontextprotocol/client`), pinned to revision 2026-07-28 and declaring
 *   URL-mode elicitation, waits for a human's decision without any gateway-specific code: its elicitation
 *   handler gets the console page of the exact action, a human decides, and the client's next round gets
 *   the upstream's real result (or the refusal with the reviewer's note);
 * - the Tasks extension over raw JSON-RPC: a task polled to completion, one cancelled (the approval item is
 *   withdrawn), the capability and ownership rules of tasks/get;
 * - the signed requestState: a changed argument, a forged state and another tenant's replay are refused;
 *   declining the elicitation withdraws the call;
 * - a 2025-11-25 client gets the queued text with the console page and the action id in `_meta`.
 */
import { startFixtures } from '@agw/mcp-fixtures';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Tenant, api, humanSession, newTenant } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';
import { MCP_2026 as V, MCP_URL as URL_, mcp2026 } from './support/mcp-2026';

jest.setTimeout(90_000);

const TASKS = 'io.modelcontextprotocol/tasks';
const policy = ['package agw.custom', '', 'import rego.v1', '', 'approval contains "large sums need a human" if {', '  input.method == "add"', '  input.params.a > 1000', '}', ''].join('\n');

let t: Tenant;
let other: Tenant;
let human: string;
let fixtures: Awaited<ReturnType<typeof startFixtures>>;

/** One 2026-07-28 request over raw HTTP, as a client without an SDK sends it. */
const modern = (method: string, params: Record<string, unknown>, o: { key?: string; caps?: Record<string, unknown>; name?: string } = {}) =>
  mcp2026(method, params, { ...o, key: o.key ?? t.apiKey, clientName: 'e2e-approvals' });

const decide = (actionId: string, verdict: 'approve' | 'reject', note?: string) => api('POST', `/${verdict}/${actionId}`, { token: human, body: note ? { note } : {} });

beforeAll(async () => {
  t = await newTenant('MCP approvals');
  other = await newTenant('MCP approvals, another tenant');
  human = await humanSession(t);
  fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
  for (const x of [t, other]) {
    expect((await api('POST', '/upstreams', { key: x.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
    expect((await api('PATCH', '/dashboard/settings', { key: x.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
  }
});
afterAll(() => fixtures?.close());

/** The SDK v2 client, 2026-07-28, with a URL elicitation handler that lets a human decide. */
async function v2Client(onElicit: (params: { url: string; message: string; mode: string }) => Promise<{ action: 'accept' | 'decline' | 'cancel' }>) {
  const client = new ClientV2({ name: 'e2e-v2-approvals', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: V } } });
  client.setRequestHandler('elicitation/create', async (request) => onElicit(request.params as { url: string; message: string; mode: string }));
  await client.connect(new TransportV2(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
  return client;
}

const actionOf = (url: string) => /\/approvals\/([0-9a-f-]{36})$/.exec(url)![1];

describe('the official v2 client waits for a human (multi round-trip, URL elicitation)', () => {
  test('approved in the console: the next round gets the upstream’s real result, and the call ran once', async () => {
    const asked: Array<{ url: string; message: string; mode: string }> = [];
    const client = await v2Client(async (p) => {
      asked.push(p);
      expect((await decide(actionOf(p.url), 'approve', 'fine by me')).status).toBe(200);
      return { action: 'accept' };
    });
    const result = await client.callTool({ name: 'fx__add', arguments: { a: 5000, b: 1 } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: '5001' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: 'url', message: expect.stringContaining('fx__add') });
    expect(asked[0].url).toBe(`${new URL(E2E_BASE_URL).origin}/approvals/${actionOf(asked[0].url)}`);
    const actionId = actionOf(asked[0].url);
    expect(result._meta?.['io.agw/action_id']).toBe(actionId);
    const action = await api('GET', `/actions/${actionId}`, { key: t.apiKey });
    expect(action.body).toMatchObject({ status: 'approved', execution_mode: 'gateway_brokered', execution_result: { status_code: 200 } });
    // one queued record and one human decision for this action: the retry read the result, it did not run again
    const log = await api('GET', '/audit/log?limit=20', { key: t.apiKey });
    const records = log.body.records.filter((r: { action_id: string }) => r.action_id === actionId);
    expect(records.map((r: { decision: string }) => r.decision).sort()).toEqual(['allow', 'requires_human']);
    await client.close();
  });

  test('rejected: the next round is a refusal with the reviewer’s note', async () => {
    const client = await v2Client(async (p) => {
      expect((await decide(actionOf(p.url), 'reject', 'not this month')).status).toBe(200);
      return { action: 'accept' };
    });
    const result = await client.callTool({ name: 'fx__add', arguments: { a: 7000, b: 1 } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/rejected action [0-9a-f-]{36}; it did not run\. Reviewer's note: not this month/);
    await client.close();
  });

  test('an allowed call needs no round: the v2 client gets the result at once', async () => {
    const client = await v2Client(async () => {
      throw new Error('no elicitation expected');
    });
    expect((await client.callTool({ name: 'fx__add', arguments: { a: 1, b: 2 } })).content).toEqual([{ type: 'text', text: '3' }]);
    await client.close();
  });
});

describe('the signed requestState', () => {
  const urlElicitation = { elicitation: { url: {} } };
  let state: string;
  let actionId: string;
  beforeAll(async () => {
    const first = await modern('tools/call', { name: 'fx__add', arguments: { a: 9000, b: 1 } }, { caps: urlElicitation });
    expect(first.body.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String), inputRequests: { agw_approval: { method: 'elicitation/create', params: { mode: 'url' } } } });
    state = first.body.result.requestState;
    actionId = first.body.result._meta['io.agw/action_id'];
  });

  test('a changed argument is refused: the approval is bound to the exact call', async () => {
    const changed = await modern('tools/call', { name: 'fx__add', arguments: { a: 9000, b: 2 }, requestState: state, inputResponses: { agw_approval: { action: 'accept' } } }, { caps: urlElicitation });
    expect(changed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/belongs to another call.*A changed argument is a new call/) });
  });

  test('a forged state and another tenant’s replay are refused', async () => {
    const forged = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
    const f = await modern('tools/call', { name: 'fx__add', arguments: { a: 9000, b: 1 }, requestState: forged }, { caps: urlElicitation });
    expect(f.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/not issued by this gateway or was altered/) });
    const replay = await modern('tools/call', { name: 'fx__add', arguments: { a: 9000, b: 1 }, requestState: state }, { key: other.apiKey, caps: urlElicitation });
    expect(replay.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/issued to another caller/) });
    // and the other tenant cannot read the action either
    expect((await api('GET', `/actions/${actionId}`, { key: other.apiKey })).status).toBe(404);
  });

  test('while nobody decided, the retry answers input_required again; declining withdraws the call', async () => {
    const waiting = await modern('tools/call', { name: 'fx__add', arguments: { a: 9000, b: 1 }, requestState: state, inputResponses: { agw_approval: { action: 'accept' } } }, { caps: urlElicitation });
    expect(waiting.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { agw_approval: { params: { message: expect.stringMatching(/Still waiting/) } } } });
    const declined = await modern('tools/call', { name: 'fx__add', arguments: { a: 9000, b: 1 }, requestState: waiting.body.result.requestState, inputResponses: { agw_approval: { action: 'decline' } } }, { caps: urlElicitation });
    expect(declined.body.result).toMatchObject({ resultType: 'complete', isError: true, content: [{ text: expect.stringMatching(/withdrawn by the client/) }] });
    expect((await api('GET', `/actions/${actionId}`, { key: t.apiKey })).body.status).toBe('rejected');
    expect((await decide(actionId, 'approve')).status).toBe(409);
  });
});

describe('the Tasks extension', () => {
  const tasks = { extensions: { [TASKS]: {} } };

  test('server/discover advertises it; a queued call becomes a task, polled to completion once approved', async () => {
    expect((await modern('server/discover', {})).body.result.capabilities.extensions).toEqual({ [TASKS]: {} });
    const created = await modern('tools/call', { name: 'fx__add', arguments: { a: 4000, b: 2 } }, { caps: tasks });
    expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working', taskId: expect.any(String), pollIntervalMs: expect.any(Number), createdAt: expect.any(String), statusMessage: expect.stringContaining('/approvals/') });
    const taskId = created.body.result.taskId;
    // the task is durable before the answer: any replica reads it from the stores
    expect((await modern('tasks/get', { taskId }, { caps: tasks })).body.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect((await decide(taskId, 'approve')).status).toBe(200);
    const done = await modern('tasks/get', { taskId }, { caps: tasks });
    expect(done.body.result).toMatchObject({ resultType: 'complete', taskId, status: 'completed', result: { content: [{ type: 'text', text: '4002' }], _meta: { 'io.agw/action_id': taskId } } });
  });

  test('a cancelled task withdraws the approval item; nobody can approve it afterwards', async () => {
    const created = await modern('tools/call', { name: 'fx__add', arguments: { a: 4000, b: 3 } }, { caps: tasks });
    const taskId = created.body.result.taskId;
    const pending = await api('GET', '/approvals', { key: t.apiKey });
    expect(pending.body.pending.map((p: { action_id: string }) => p.action_id)).toContain(taskId);
    expect((await modern('tasks/cancel', { taskId }, { caps: tasks })).body.result).toMatchObject({ resultType: 'complete' });
    expect((await modern('tasks/get', { taskId }, { caps: tasks })).body.result).toMatchObject({ status: 'cancelled' });
    expect((await api('GET', '/approvals', { key: t.apiKey })).body.pending.map((p: { action_id: string }) => p.action_id)).not.toContain(taskId);
    expect((await decide(taskId, 'approve')).status).toBe(409);
  });

  test('tasks/get needs the extension declared (-32021), and another tenant’s or an unknown task is -32602', async () => {
    const created = await modern('tools/call', { name: 'fx__add', arguments: { a: 4000, b: 4 } }, { caps: tasks });
    const taskId = created.body.result.taskId;
    expect((await modern('tasks/get', { taskId })).body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    expect((await modern('tasks/get', { taskId }, { key: other.apiKey, caps: tasks })).body.error).toMatchObject({ code: -32602, message: 'Task not found' });
    expect((await modern('tasks/get', { taskId: '00000000-0000-4000-8000-000000000000' }, { caps: tasks })).body.error).toMatchObject({ code: -32602 });
    expect((await modern('tasks/cancel', { taskId }, { key: other.apiKey, caps: tasks })).body.error).toMatchObject({ code: -32602 });
  });
});

test('a 2025-11-25 client gets the queued text with the console page, and the action id in _meta', async () => {
  const client = new Client({ name: 'e2e-legacy-approvals', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
  const r = await client.callTool({ name: 'fx__add', arguments: { a: 3000, b: 1 } });
  const actionId = r._meta?.['io.agw/action_id'] as string;
  expect(actionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(JSON.stringify(r.content)).toContain(`/approvals/${actionId}`);
  expect(JSON.stringify(r.content)).toContain(`GET /api/actions/${actionId}`);
  await client.close();
});
