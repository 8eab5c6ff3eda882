/**
 * The remote MCP server (/api/mcp/server, Streamable HTTP) driven by the official MCP SDK client: a
 * tenant's governed tools are listed, and every tools/call goes through the governance pipeline (allowed
 * -> executed by the gateway with the HSM-held credential; escalated -> a text saying it is queued;
 * denied -> an error result), audited like any other call.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Tenant, api, newTenant, recordRaw } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

let upstream: http.Server;
let upstreamUrl: string;
const received: Array<{ authorization?: string; body: string }> = [];
let t: Tenant;
const tool = `svc_crm_${randomUUID().slice(0, 8)}`;

async function mcpClient(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/mcp/server`), { requestInit: { headers } }));
  return client;
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ authorization: req.headers.authorization, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, echo: JSON.parse(body || '{}') }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/call`;
  t = await newTenant('MCP');
  const reg = await api('POST', '/credentials/register', {
    key: t.apiKey,
    body: { tool_id: tool, name: 'crm-token', value: 'mcp-secret-value-123', credential_type: 'bearer', upstream_url: upstreamUrl },
  });
  expect([200, 201]).toContain(reg.status);
});
afterAll(async () => {
  await new Promise((r) => upstream.close(r));
});

it('reports its health publicly and refuses unauthenticated MCP requests', async () => {
  const h = await api('GET', '/mcp/server/health');
  expect(h.status).toBe(200);
  expect(h.body).toMatchObject({ status: 'ok', transport: 'streamable-http' });
  await expect(mcpClient({})).rejects.toThrow();
  const raw = await fetch(`${E2E_BASE_URL}/mcp/server`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await recordRaw('POST', '/mcp/server', raw);
  expect(raw.status).toBe(401);
});

it('lists the tenant’s governed tools to a client authenticated with the API key as a bearer token', async () => {
  const client = await mcpClient({ authorization: `Bearer ${t.apiKey}` });
  const { tools } = await client.listTools();
  expect(tools.map((x) => x.name)).toEqual([tool]);
  expect(tools[0].inputSchema.properties).toHaveProperty('params');
  await client.close();
  const other = await newTenant('MCP other');
  const c2 = await mcpClient({ 'x-api-key': other.apiKey });
  expect((await c2.listTools()).tools).toEqual([]);
  await c2.close();
});

it('runs tools/call through the pipeline: executed with the HSM-held credential, audited as mcp_governed', async () => {
  const client = await mcpClient({ 'x-api-key': t.apiKey });
  const r = (await client.callTool({ name: tool, arguments: { method: 'get_contact', params: { id: 42 }, agent_id: 'mcp-agent-1' } })) as { content: Array<{ text: string }>; isError?: boolean };
  expect(r.isError).toBeFalsy();
  const out = JSON.parse(r.content[0].text);
  expect(out).toMatchObject({ status: 'allowed', execution_mode: 'gateway_brokered', execution_result: { status_code: 200, body: { ok: true, echo: { id: 42 } } } });
  expect(received.at(-1)?.authorization).toBe('Bearer mcp-secret-value-123');
  expect(r.content[0].text).not.toContain('mcp-secret-value-123');
  const log = await api('GET', '/audit/log?limit=5', { key: t.apiKey });
  expect(log.body.records.find((x: { action_id: string }) => x.action_id === out.action_id)).toMatchObject({ source: 'mcp_governed', agent_id: 'mcp-agent-1', tool, method: 'get_contact', decision: 'allow' });
  await client.close();
});

it('answers an escalated call with a text naming the queued action, and a denied one as an error result', async () => {
  const client = await mcpClient({ 'x-api-key': t.apiKey });
  const pending = (await client.callTool({ name: tool, arguments: { method: 'delete', params: { id: 1 } } })) as { content: Array<{ text: string }> };
  const queued = (await api('GET', '/approvals', { key: t.apiKey })).body.pending.find((p: { tool: string }) => p.tool === tool);
  expect(queued).toBeDefined();
  expect(pending.content[0].text).toContain(queued.action_id);
  expect(pending.content[0].text).toMatch(/queued/);
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'crm' } })).status).toBe(200);
  const denied = (await client.callTool({ name: tool, arguments: { method: 'delete', params: { id: 2 } } })) as { content: Array<{ text: string }>; isError?: boolean };
  expect(denied.isError).toBe(true);
  expect(JSON.parse(denied.content[0].text)).toMatchObject({ status: 'denied', violations: expect.arrayContaining(['crm_delete_not_allowed']), severity: 'high' });
  const bad = (await client.callTool({ name: tool, arguments: { agent_id: 'has space' } })) as { content: Array<{ text: string }>; isError?: boolean };
  expect(bad.isError).toBe(true);
  expect(bad.content[0].text).toMatch(/agent_id/);
  await client.close();
});
