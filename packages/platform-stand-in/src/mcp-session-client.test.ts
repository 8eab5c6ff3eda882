/**
 * The stand-in as an MCP client, against a real MCP server (Streamable HTTP, stateless) that checks the
 * bearer: tools/list and tools/call with the vault credential's token, the events they produce, and the
 * session errors for a missing credential, a refused token and an unreachable server; the demo mode.
 */
import Anthropic from '@anthropic-ai/sdk';
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
