/**
 * Test fixtures: a real MCP server (stateless Streamable HTTP on an ephemeral port) that checks a bearer
 * token, the SDK client of a stand-in, a session factory, and the control API over fetch.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import type { RunningStandIn } from '../index';

export interface TestMcpServer {
  url: string;
  /** the Authorization header of every request received */
  seenAuth: string[];
  close(): Promise<void>;
}

/** Tools `svc_echo` ({text} → "echo <text>") and `svc_fail` (an isError result); 401 without `Bearer <token>`. */
export async function startTestMcpServer(token: string): Promise<TestMcpServer> {
  const seenAuth: string[] = [];
  const server = http.createServer(async (req, res) => {
    seenAuth.push(String(req.headers.authorization));
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const mcp = new McpServer({ name: 'test-gateway', version: '1.0.0' });
    mcp.registerTool('svc_echo', { inputSchema: { text: z.string().optional(), method: z.string().optional(), params: z.any().optional() } }, async (a) => ({
      content: [{ type: 'text', text: `echo ${a.text ?? a.method}` }],
    }));
    mcp.registerTool('svc_fail', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'denied by policy' }], isError: true }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    seenAuth,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

export const sdkClient = (standIn: RunningStandIn, apiKey: string) => new Anthropic({ apiKey, baseURL: standIn.url, maxRetries: 0 });

export interface SessionSpec {
  mcpUrl: string;
  /** the vault credential's token; `null` registers no credential */
  token?: string | null;
  /** the credential's URL when it differs from the server's */
  credentialUrl?: string;
  message?: string;
  /** MCP tools whose permission policy is always_ask (the rest always_allow) */
  askTools?: string[];
}

/** An agent, an environment, a vault with a static_bearer credential, and a session with the MCP server as an override. */
export async function createSession(client: Anthropic, o: SessionSpec) {
  const agent = await client.beta.agents.create({ name: 'support-agent', model: 'claude-sonnet-4-5', system: 'base prompt' });
  const env = await client.beta.environments.create({ name: 'env' });
  const vault = await client.beta.vaults.create({ display_name: 'gateway bearer' });
  if (o.token !== null) {
    await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', token: o.token ?? 'mcp-secret', mcp_server_url: o.credentialUrl ?? o.mcpUrl } });
  }
  return client.beta.sessions.create({
    agent: {
      type: 'agent_with_overrides',
      id: agent.id,
      system: 'governed prompt',
      mcp_servers: [{ type: 'url', name: 'gw', url: o.mcpUrl }],
      tools: [{ type: 'agent_toolset_20260401' }, {
          type: 'mcp_toolset',
          mcp_server_name: 'gw',
          default_config: { permission_policy: { type: 'always_allow' } },
          ...(o.askTools ? { configs: o.askTools.map((name) => ({ name, permission_policy: { type: 'always_ask' as const } })) } : {}),
        },],
    },
    environment_id: env.id,
    vault_ids: [vault.id],
    metadata: { tenant: 't1' },
    title: 'a session',
    ...(o.message ? { initial_events: [{ type: 'user.message' as const, content: [{ type: 'text' as const, text: o.message }] }] } : {}),
  });
}

export async function control<T = any>(standIn: RunningStandIn, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await fetch(`${standIn.url}/_stand-in${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as T };
}

export const script = async (standIn: RunningStandIn, sessionId: string, steps: unknown[]) => (await control<{ results: any[] }>(standIn, 'POST', `/sessions/${sessionId}/script`, { steps })).body.results;

export async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
