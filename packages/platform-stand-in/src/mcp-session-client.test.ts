/**
 * The stand-in as an MCP client, against a real MCP server (Streamable HTTP, stateless) that checks the
 * bearer: tools/list and tools/call with the vault credential's token, the events they produce, and the
 * session errors for a missing credential, a refused token and an unreachable server; the demo mode.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { BetaManagedAgentsAgentMCPToolUseEvent, BetaManagedAgentsSessionStatusIdleEvent, BetaManagedAgentsUserToolConfirmationEventParams } from '@anthropic-ai/sdk/resources/beta/sessions/events';
import { type TestMcpServer, control, createSession, script, sdkClient, startTestMcpServer, until } from './__tests__/fixtures';
import { type RunningStandIn, startPlatformStandIn } from './index';

const KEY = 'test-key';
let standIn: RunningStandIn;
let client: Anthropic;
let mcp: TestMcpServer;

beforeAll(async () => {
  [standIn, mcp] = await Promise.all([startPlatformStandIn({ apiKey: KEY }), startTestMcpServer('mcp-secret')]);
  client = sdkClient(standIn, KEY);
});
afterAll(() => Promise.all([standIn.close(), mcp.close()]));

const view = async (id: string) => (await control(standIn, 'GET', `/sessions/${id}`)).body;

describe('MCP client of the session’s server', () => {
  it('lists and calls tools with the vault credential’s bearer; emits agent.mcp_tool_use / agent.mcp_tool_result', async () => {
    const s = await createSession(client, { mcpUrl: mcp.url });
    const before = mcp.seenAuth.length;
    const results = await script(standIn, s.id, [{ mcp_list: true }, { mcp_call: { tool: 'svc_echo', arguments: { text: 'x' } } }, { mcp_call: { tool: 'svc_fail', arguments: {} } }]);
    expect(results[0]).toEqual(['svc_echo', 'svc_fail']);
    expect(results[1]).toMatchObject({ content: [{ type: 'text', text: 'echo x' }] });
    expect(results[2]).toMatchObject({ isError: true, content: [{ type: 'text', text: 'denied by policy' }] });
    expect(mcp.seenAuth.length).toBeGreaterThan(before);
    expect(mcp.seenAuth.slice(before).every((a) => a === 'Bearer mcp-secret')).toBe(true);

    const events = (await view(s.id)).events;
    expect(events.map((e: any) => e.type)).toEqual(['agent.mcp_tool_use', 'agent.mcp_tool_result', 'agent.mcp_tool_use', 'agent.mcp_tool_result']);
    expect(events[0]).toMatchObject({ name: 'svc_echo', input: { text: 'x' }, mcp_server_name: 'gw' });
    expect(events[1]).toMatchObject({ mcp_tool_use_id: events[0].id, content: [{ type: 'text', text: 'echo x' }], is_error: false });
    expect(events[3]).toMatchObject({ mcp_tool_use_id: events[2].id, is_error: true });
  });

  it('without a credential for the server URL: session.error mcp_authentication_failed_error, no request sent', async () => {
    const none = await createSession(client, { mcpUrl: mcp.url, token: null });
    const other = await createSession(client, { mcpUrl: mcp.url, credentialUrl: 'http://127.0.0.1:1/other' });
    const before = mcp.seenAuth.length;
    for (const s of [none, other]) {
      const [listed, called] = await script(standIn, s.id, [{ mcp_list: true }, { mcp_call: { tool: 'svc_echo', arguments: { text: 'x' } } }]);
      expect(listed).toMatchObject({ error: expect.stringContaining('no vault credential'), error_type: 'mcp_authentication_failed_error' });
      expect(called).toMatchObject({ error_type: 'mcp_authentication_failed_error' });
      const events = (await view(s.id)).events;
      expect(events.map((e: any) => e.type)).toEqual(['session.error', 'session.error']);
      expect(events[0].error).toMatchObject({ type: 'mcp_authentication_failed_error', mcp_server_name: 'gw', retry_status: { type: 'terminal' } });
    }
    expect(mcp.seenAuth.length).toBe(before);
  });

  it('a refused token: the call fails (is_error result) and a session.error mcp_authentication_failed_error follows', async () => {
    const s = await createSession(client, { mcpUrl: mcp.url, token: 'wrong' });
    const [listed, called] = await script(standIn, s.id, [{ mcp_list: true }, { mcp_call: { tool: 'svc_echo', arguments: { text: 'x' } } }]);
    expect(listed).toMatchObject({ error_type: 'mcp_authentication_failed_error' });
    expect(called).toMatchObject({ isError: true, error_type: 'mcp_authentication_failed_error' });
    expect(mcp.seenAuth).toContain('Bearer wrong');
    const types = (await view(s.id)).events.map((e: any) => e.type);
    expect(types).toEqual(['session.error', 'agent.mcp_tool_use', 'agent.mcp_tool_result', 'session.error']);
  });

  it('an unreachable server: session.error mcp_connection_failed_error', async () => {
    const url = 'http://127.0.0.1:9/mcp';
    const s = await createSession(client, { mcpUrl: url });
    const [listed] = await script(standIn, s.id, [{ mcp_list: true }]);
    expect(listed).toMatchObject({ error_type: 'mcp_connection_failed_error' });
  });

  it('never shows a token: not in the session, the credential, nor the control API', async () => {
    const s = await createSession(client, { mcpUrl: mcp.url, message: 'hi' });
    await script(standIn, s.id, [{ mcp_call: { tool: 'svc_echo', arguments: { text: 'y' } } }]);
    expect(JSON.stringify(await client.beta.sessions.retrieve(s.id))).not.toContain('mcp-secret');
    expect(JSON.stringify(await view(s.id))).not.toContain('mcp-secret');
    expect(JSON.stringify((await control(standIn, 'GET', '/sessions')).body)).not.toContain('mcp-secret');
  });
});

describe('demo mode', () => {
  it('a session created with a user message lists the tools, calls the first, runs ls -la, answers and ends its turn', async () => {
    const demo = await startPlatformStandIn({ apiKey: KEY, demo: true });
    try {
      const demoClient = sdkClient(demo, KEY);
      const s = await createSession(demoClient, { mcpUrl: mcp.url, message: 'Look up the status page' });
      const stream = await demoClient.beta.sessions.events.stream(s.id);
      const seen: any[] = [];
      for await (const e of stream) {
        seen.push(e);
        if (e.type === 'session.status_idle') break;
      }
      expect(seen.map((e) => e.type)).toEqual(['agent.mcp_tool_use', 'agent.mcp_tool_result', 'agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle']);
      expect(seen[0]).toMatchObject({ name: 'svc_echo', input: { method: 'call', params: {} }, mcp_server_name: 'gw' });
      expect(seen[1]).toMatchObject({ is_error: false, content: [{ type: 'text', text: 'echo call' }] });
      expect(seen[2]).toMatchObject({ name: 'bash', input: { command: 'ls -la' } });
      expect(seen[5]).toMatchObject({ stop_reason: { type: 'end_turn' } });
      // a session without a user message waits
      const idle = await createSession(demoClient, { mcpUrl: mcp.url });
      await new Promise((r) => setTimeout(r, 500));
      expect(demo.state.sessions.get(idle.id)!.log.events).toHaveLength(0);
      await until(() => demoClient.beta.sessions.retrieve(s.id), (x) => x.status === 'idle');
    } finally {
      await demo.close();
    }
  });
});

describe('permission policy always_ask: the platform asks before the tool runs', () => {
  const pending = async (id: string) => until(() => client.beta.sessions.retrieve(id), (x) => x.status === 'idle' && standIn.state.sessions.get(id)!.awaiting.size > 0);
  const confirm = (sessionId: string, c: BetaManagedAgentsUserToolConfirmationEventParams) => client.beta.sessions.events.send(sessionId, { events: [c] });

  it('stops with requires_action naming the tool use; allow resumes it and the tool runs', async () => {
    const s = await createSession(client, { mcpUrl: mcp.url, askTools: ['svc_echo'] });
    expect(s.agent.tools).toContainEqual(expect.objectContaining({ type: 'mcp_toolset', configs: [{ name: 'svc_echo', enabled: true, permission_policy: { type: 'always_ask' } }] }));
    const before = mcp.seenAuth.length;
    const running = script(standIn, s.id, [{ mcp_call: { tool: 'svc_echo', arguments: { text: 'waited' } } }, { mcp_call: { tool: 'svc_fail', arguments: {} } }]);
    await pending(s.id);
    expect(mcp.seenAuth.length).toBe(before); // nothing reached the MCP server yet
    const { data: events } = await client.beta.sessions.events.list(s.id);
    const use = events.find((e): e is BetaManagedAgentsAgentMCPToolUseEvent => e.type === 'agent.mcp_tool_use')!;
    expect(use).toMatchObject({ name: 'svc_echo', evaluated_permission: 'ask', evaluation: { type: 'always_ask' } });
    const idle = events.at(-1) as BetaManagedAgentsSessionStatusIdleEvent;
    expect(idle).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [use.id] } });

    await confirm(s.id, { type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' });
    const [called, other] = await running;
    expect(called).toMatchObject({ content: [{ type: 'text', text: 'echo waited' }] });
    expect(other).toMatchObject({ isError: true }); // svc_fail is always_allow: it ran without asking
    const types = (await view(s.id)).events.map((e: any) => e.type);
    expect(types).toEqual(['agent.mcp_tool_use', 'session.status_idle', 'user.tool_confirmation', 'session.status_running', 'agent.mcp_tool_result', 'agent.mcp_tool_use', 'agent.mcp_tool_result']);
    expect((await view(s.id)).events[5]).toMatchObject({ name: 'svc_fail', evaluated_permission: 'allow', evaluation: { type: 'always_allow' } });
  });

  it('deny: the tool never runs, the agent gets the deny message as an error result', async () => {
    const s = await createSession(client, { mcpUrl: mcp.url, askTools: ['svc_echo'] });
    const before = mcp.seenAuth.length;
    const running = script(standIn, s.id, [{ mcp_call: { tool: 'svc_echo', arguments: { text: 'no' } } }]);
    await pending(s.id);
    const useId = [...standIn.state.sessions.get(s.id)!.awaiting.keys()][0];
    await confirm(s.id, { type: 'user.tool_confirmation', tool_use_id: useId, result: 'deny', deny_message: 'not to this customer' });
    const [denied] = await running;
    expect(denied).toMatchObject({ isError: true, confirmation: 'deny', content: [{ type: 'text', text: 'The user denied this tool call: not to this customer' }] });
    expect(mcp.seenAuth.length).toBe(before);
    const events = (await view(s.id)).events;
    expect(events.find((e: any) => e.type === 'user.tool_confirmation')).toMatchObject({ tool_use_id: useId, result: 'deny', deny_message: 'not to this customer' });
  });

  it('refuses a confirmation for nothing awaited, or a deny_message with allow (400)', async () => {
    const s = await createSession(client, { mcpUrl: mcp.url, askTools: ['svc_echo'] });
    await expect(confirm(s.id, { type: 'user.tool_confirmation', tool_use_id: 'sevt_unknown', result: 'allow' })).rejects.toMatchObject({ status: 400 });
    const running = script(standIn, s.id, [{ mcp_call: { tool: 'svc_echo', arguments: { text: 'x' } } }]);
    await pending(s.id);
    const useId = [...standIn.state.sessions.get(s.id)!.awaiting.keys()][0];
    await expect(confirm(s.id, { type: 'user.tool_confirmation', tool_use_id: useId, result: 'allow', deny_message: 'why' })).rejects.toMatchObject({ status: 400 });
    // an interrupt denies what waits
    await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.interrupt' }] });
    expect((await running)[0]).toMatchObject({ confirmation: 'deny' });
  });
});
