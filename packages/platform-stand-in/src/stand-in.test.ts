/**
 * The stand-in through the official SDK (real sockets): the beta resources the managed service uses, the
 * SSE stream (no replay; a dropped connection ends it), the paged event list, interrupts, and the MCP
 * client side against a real MCP server that checks the vault's bearer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { type RunningStandIn, startPlatformStandIn } from './index';

let platform: RunningStandIn;
let client: Anthropic;
let mcp: http.Server;
let mcpUrl: string;
const seenAuth: string[] = [];

beforeAll(async () => {
  platform = await startPlatformStandIn({ apiKey: 'test-key', heartbeatMs: 200 });
  client = new Anthropic({ apiKey: 'test-key', baseURL: platform.url, maxRetries: 0 });
  mcp = http.createServer(async (req, res) => {
    seenAuth.push(String(req.headers.authorization));
    if (req.headers.authorization !== 'Bearer mcp-secret') return void res.writeHead(401).end();
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const server = new McpServer({ name: 'test', version: '1.0.0' });
    server.registerTool('svc_echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: `echo ${text}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((r) => mcp.listen(0, '127.0.0.1', () => r()));
  mcpUrl = `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await platform.close();
  mcp.close();
});

async function newSession(o: { token?: string; message?: string } = {}) {
  const agent = await client.beta.agents.create({ name: 'a', model: 'claude-sonnet-4-5' });
  const env = await client.beta.environments.create({ name: 'e' });
  const vault = await client.beta.vaults.create({ display_name: 'v' });
  const cred = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', token: o.token ?? 'mcp-secret', mcp_server_url: mcpUrl } });
  expect(JSON.stringify(cred)).not.toContain(o.token ?? 'mcp-secret');
  const session = await client.beta.sessions.create({
    agent: { type: 'agent_with_overrides', id: agent.id, system: 'governed', mcp_servers: [{ type: 'url', name: 'gw', url: mcpUrl }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'gw', default_config: { permission_policy: { type: 'always_allow' } } }] },
    environment_id: env.id,
    vault_ids: [vault.id],
    ...(o.message ? { initial_events: [{ type: 'user.message', content: [{ type: 'text', text: o.message }] }] } : {}),
  });
  return session;
}

const script = async (id: string, steps: unknown[]) =>
  (await (await fetch(`${platform.url}/_stand-in/sessions/${id}/script`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ steps }) })).json()) as { results: any[] };

describe('platform stand-in', () => {
  it('refuses a wrong key (401) and a missing beta header (400) in the API’s error shape', async () => {
    await expect(new Anthropic({ apiKey: 'nope', baseURL: platform.url, maxRetries: 0 }).beta.agents.create({ name: 'x', model: 'm' })).rejects.toMatchObject({ status: 401 });
    const r = await fetch(`${platform.url}/v1/agents`, { method: 'POST', headers: { 'x-api-key': 'test-key', 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    await expect(client.beta.sessions.retrieve('sesn_missing')).rejects.toMatchObject({ status: 404 });
  });

  it('creates a session with overrides; streams only new events; lists all with a page cursor', async () => {
    const s = await newSession({ message: 'hi' });
    expect(s).toMatchObject({ type: 'session', status: 'running' });
    expect(s.agent.system).toBe('governed');
    const stream = await client.beta.sessions.events.stream(s.id);
    const got: string[] = [];
    const reading = (async () => {
      for await (const e of stream) {
        got.push(e.type);
        if (e.type === 'session.status_idle') break;
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    await script(s.id, [{ tool_use: { name: 'bash', input: { command: 'ls' } } }, { idle: 'end_turn' }]);
    await reading;
    expect(got).toEqual(['agent.tool_use', 'agent.tool_result', 'session.status_idle']);
    const all = [];
    for await (const e of client.beta.sessions.events.list(s.id, { limit: 2 })) all.push(e.type);
    expect(all).toEqual(['user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'session.status_idle']);
  });

  it('ends a stream whose connection is dropped', async () => {
    const s = await newSession();
    const stream = await client.beta.sessions.events.stream(s.id);
    const outcome = (async () => {
      try {
        for await (const _e of stream) {
          /* nothing */
        }
        return 'ended';
      } catch {
        return 'error';
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    await script(s.id, [{ drop_stream: true }]);
    expect(['ended', 'error']).toContain(await outcome);
  });

  it('calls the session’s MCP server with the vault credential’s bearer, and fails without one', async () => {
    const s = await newSession();
    const { results } = await script(s.id, [{ mcp_list: true }, { mcp_call: { tool: 'svc_echo', arguments: { text: 'x' } } }]);
    expect(results[0]).toEqual(['svc_echo']);
    expect(results[1].content[0].text).toBe('echo x');
    expect(seenAuth.every((a) => a === 'Bearer mcp-secret')).toBe(true);
    const events = (await (await fetch(`${platform.url}/_stand-in/sessions/${s.id}`)).json()).events.map((e: any) => e.type);
    expect(events).toEqual(['agent.mcp_tool_use', 'agent.mcp_tool_result']);
    const wrong = await newSession({ token: 'wrong' });
    const r = await script(wrong.id, [{ mcp_call: { tool: 'svc_echo', arguments: { text: 'x' } } }]);
    expect(r.results[0].isError).toBe(true);
  });

  it('stops a script on user.interrupt and records it', async () => {
    const s = await newSession({ message: 'go' });
    const running = script(s.id, [{ wait_ms: 300 }, { tool_use: { name: 'bash', input: { command: 'ls' } } }]);
    await new Promise((r) => setTimeout(r, 50));
    await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.interrupt' }] });
    expect((await running).results[1]).toBe('skipped');
    const view = await (await fetch(`${platform.url}/_stand-in/sessions/${s.id}`)).json();
    expect(view.interrupts).toHaveLength(1);
    expect(view.status).toBe('idle');
  });
});
