/**
 * Honest MCP answers (issue 42, item 8), through the public API with the project's hostile MCP upstream:
 * a model tells failure from success by `isError`, so
 * - a tools/call of a quarantined federated tool is a tool result with `isError: true` that names the
 *   violation (`tool_definition_changed`, `suspicious_description`) and how a human approves it, never
 *   `-32602 Tool … not found`, and the upstream is never called;
 * - a brokered or federated execution that failed (the upstream answered 502) is `isError: true` with
 *   its cause, on the tenant's MCP server in both protocol eras.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { type HostileUpstream, POISONED_ADD_DESCRIPTION, type ToolSpec, startHostileUpstream } from '@agw/mcp-fixtures';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Tenant, api, newTenant, sleep } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

jest.setTimeout(120_000);

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
});

async function hostile(tools: ToolSpec[], fail: { call?: 'http_502' } = {}): Promise<HostileUpstream> {
  const u = await startHostileUpstream({ host: '127.0.0.1', config: { tools, fail } });
  closers.push(() => u.close());
  return u;
}

async function mcpClient(t: Tenant): Promise<Client> {
  const client = new Client({ name: 'e2e-honest-answers', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/mcp/server`), { requestInit: { headers: { 'x-api-key': t.apiKey } } }));
  closers.push(() => client.close());
  return client;
}

/** The 2026-07-28 revision's stateless tools/call (no initialize), as modern-revision.ts serves it. */
async function modernCall(t: Tenant, name: string, args: Record<string, unknown>): Promise<{ result?: { isError?: boolean; content: Array<{ text?: string }> }; error?: { code: number; message: string } }> {
  const version = '2026-07-28';
  const r = await api('POST', '/mcp/server', {
    key: t.apiKey,
    headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': version, 'mcp-method': 'tools/call', 'mcp-name': name },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args, _meta: { 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientInfo': { name: 'e2e-honest-answers', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    },
  });
  expect(r.status).toBe(200);
  return r.body;
}

type CallResult = { isError?: boolean; content: Array<{ text?: string }> };
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');
const plain = (name: string, description: string): ToolSpec => ({ kind: 'plain', name, description });

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await sleep(200);
  }
}

describe('a quarantined federated tool', () => {
  test('is refused as an isError result naming the violation and the approval route; the upstream is never called', async () => {
    const t = await newTenant('Honest quarantine');
    const add = { kind: 'definition' as const, definition: { name: 'add', description: POISONED_ADD_DESCRIPTION, inputSchema: { type: 'object' } } };
    const up = await hostile([plain('tool', 'Version A.'), add]);
    const reg = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'q', url: up.mcpUrl } });
    expect(reg.status).toBe(201);
    // the definition changes after it was pinned: the upstream says tools/list_changed, the vault re-reads
    await up.configure({ tools: [plain('tool', 'Version B.'), add] });
    const tools = await until(
      async () => (await api('GET', '/upstreams/q/tools', { key: t.apiKey })).body.tools as Array<{ name: string; state: string; reason: string }>,
      (x) => x.find((y) => y.name === 'tool')?.state === 'quarantined',
    );
    expect(tools.find((x) => x.name === 'tool')).toMatchObject({ state: 'quarantined', reason: 'tool_definition_changed' });
    expect(tools.find((x) => x.name === 'add')).toMatchObject({ state: 'quarantined', reason: 'suspicious_description' });
    up.reset();

    const client = await mcpClient(t);
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('q__tool');
    for (const [tool, violation] of [
      ['tool', 'tool_definition_changed'],
      ['add', 'suspicious_description'],
    ]) {
      const r = (await client.callTool({ name: `q__${tool}`, arguments: {} })) as CallResult;
      expect(r.isError).toBe(true);
      const answer = JSON.parse(textOf(r));
      expect(answer).toMatchObject({ status: 'denied', violations: [violation] });
      expect(answer.message).toContain(`a human must approve it (POST /api/upstreams/q/tools/${tool}/approve)`);
      // the refusal is audited like the HTTP entrance's
      const records = await until(
        async () => (await api('GET', '/audit/log?limit=20', { key: t.apiKey })).body.records as Array<{ action_id: string; decision: string; violations: string[] }>,
        (x) => x.some((y) => y.action_id === answer.action_id),
      );
      expect(records.find((y) => y.action_id === answer.action_id)).toMatchObject({ decision: 'deny', violations: [violation] });
      // the 2026-07-28 revision answers the same
      const modern = await modernCall(t, `q__${tool}`, {});
      expect(modern.error).toBeUndefined();
      expect(modern.result?.isError).toBe(true);
      expect(textOf(modern.result!)).toContain(violation);
    }
    // the HTTP entrance refuses the same call with the same violation
    const http403 = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: { agent_id: 'a', agent_type: 'assistant', agent_version: '1.0.0', tool: 'q', method: 'tool', params: {} } });
    expect(http403.status).toBe(403);
    expect(http403.body.detail.violations).toEqual(['tool_definition_changed']);
    expect(up.stats().methods['tools/call'] ?? 0).toBe(0);

    // a name that is no tool at all is still the protocol's "not found"
    await expect(client.callTool({ name: 'q__nothing', arguments: {} })).rejects.toThrow(/not found/);
    await expect(client.callTool({ name: 'nobody__tool', arguments: {} })).rejects.toThrow(/not found/);

    // once a human approves it, the same name runs
    const human = await api('POST', '/auth/login', { body: { email: t.email, password: t.password } });
    expect((await api('POST', '/upstreams/q/tools/tool/approve', { token: human.body.access_token })).status).toBe(200);
    const ran = (await until(
      async () => (await client.callTool({ name: 'q__tool', arguments: {} })) as CallResult,
      (r) => !r.isError,
    )) as CallResult;
    expect(ran.isError).toBeFalsy();
    expect(up.stats().methods['tools/call']).toBeGreaterThanOrEqual(1);
  });
});

describe('a failed execution', () => {
  test('a federated call whose upstream answered 502 is an isError result with its cause', async () => {
    const t = await newTenant('Honest federated failure');
    const up = await hostile([plain('ping', 'Answers pong.')], { call: 'http_502' });
    expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'broken', url: up.mcpUrl } })).status).toBe(201);
    const client = await mcpClient(t);
    const r = (await client.callTool({ name: 'broken__ping', arguments: {} })) as CallResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/upstream failed: .*502/);
    const modern = await modernCall(t, 'broken__ping', {});
    expect(modern.result?.isError).toBe(true);
  });

  test('a brokered credential tool whose upstream answered 502 is an isError result with its cause; a 200 stays a result', async () => {
    const t = await newTenant('Honest brokered failure');
    let status = 502;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(status === 200 ? { ok: true } : { error: 'bad gateway' })));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const tool = `svc_failing_${randomBytes(3).toString('hex')}`;
    const cred = await api('POST', '/credentials/register', {
      key: t.apiKey,
      body: { tool_id: tool, name: 'failing', value: `sk-${randomBytes(12).toString('hex')}`, credential_type: 'bearer', upstream_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` },
    });
    expect(cred.status).toBe(201);
    const client = await mcpClient(t);
    const failed = (await client.callTool({ name: tool, arguments: { method: 'search', params: { q: 'x' } } })) as CallResult;
    expect(failed.isError).toBe(true);
    const answer = JSON.parse(textOf(failed));
    expect(answer).toMatchObject({ status: 'allowed', execution_mode: 'gateway_brokered', execution_result: { status_code: 502 } });
    expect(answer.error).toContain('execution failed with status 502 (bad gateway)');
    const modern = await modernCall(t, tool, { method: 'search', params: { q: 'x' } });
    expect(modern.result?.isError).toBe(true);
    status = 200;
    const ok = (await client.callTool({ name: tool, arguments: { method: 'search', params: { q: 'y' } } })) as CallResult;
    expect(ok.isError).toBeFalsy();
    expect(JSON.parse(textOf(ok))).toMatchObject({ execution_result: { status_code: 200, body: { ok: true } } });
  });
});
