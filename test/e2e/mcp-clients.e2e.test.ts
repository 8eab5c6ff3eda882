/**
 * Real MCP clients from the npm registry, driven exactly as a user runs them, against the gateway's MCP
 * server (/api/mcp/server) with the reference upstream `@modelcontextprotocol/server-everything` registered
 * (README "Connect a client", docs/mcp.md "Connecting clients"):
 * - the MCP Inspector CLI (`@modelcontextprotocol/inspector --cli … --transport http --header …`), in its
 *   default (legacy, 2025-11-25) era and in `--protocol-era modern` (2026-07-28), with the tenant key and
 *   with an agent key;
 * - mcp-remote, the stdio bridge a desktop host (Claude Desktop, Cursor) starts from its config, with
 *   `--header "X-API-Key:${AGW_KEY}"`, spoken to over its stdin/stdout as the host does;
 * - the official SDK v2 client (`@modelcontextprotocol/client`), legacy and pinned to 2026-07-28, with an
 *   agent key.
 * Each lists the upstream's tools under their federated names, runs one, sees the upstream's own result
 * text and the governed action's id (`_meta["io.agw/action_id"]`), and reports no error on the way: in the
 * legacy era a client opens the optional GET stream, which the transport spec answers with 405 (an
 * agent key got a 403 there, and the Inspector then showed an empty tool list with exit 0).
 * OAuth with consent is covered by mcp-oauth.e2e.test.ts and the browser suite.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type ReferenceServer, startServerEverything } from '@agw/mcp-fixtures';
import { type Tenant, api, newTenant } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

jest.setTimeout(120_000);

const MCP_URL = `${E2E_BASE_URL}/mcp/server`;
const e2eDir = path.resolve(__dirname);
const pkgDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`, { paths: [e2eDir] }));
/** the `inspector` / `mcp-inspector` bin (what `npx @modelcontextprotocol/inspector` runs) */
const inspectorBin = path.join(pkgDir('@modelcontextprotocol/inspector'), 'clients/launcher/build/index.js');
/** the `mcp-remote` bin (what `npx mcp-remote` runs) */
const mcpRemoteBin = path.join(pkgDir('mcp-remote'), 'dist/proxy.js');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const children: ChildProcess[] = [];
let everything: ReferenceServer | undefined;
/** each client's own state directory (HOME, MCP_REMOTE_CONFIG_DIR): never the user's */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'agw-e2e-mcp-clients-'));
let t: Tenant;
let agentKey: string;
/**
 * the federated names the gateway offers: the upstream's active tools as registration reported them, less
 * those that need task-augmented execution (docs/federation.md, "Task support": pinned, not offered)
 */
let federated: string[];
/** every action id a client saw, checked against the audit log at the end */
const seen: Array<{ id: string; method: string }> = [];

interface CallResult {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** Run a client program to its end (as a shell would), with its own HOME. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, HOME: scratch, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `npx @modelcontextprotocol/inspector --cli <url> --transport http --header "X-API-Key: <key>" … --format json` */
async function inspector(key: string, era: 'legacy' | 'modern', method: string[]): Promise<{ result?: any; error?: unknown }> {
  const args = [inspectorBin, '--cli', MCP_URL, '--transport', 'http', '--header', `X-API-Key: ${key}`, ...(era === 'modern' ? ['--protocol-era', 'modern'] : []), ...method, '--format', 'json'];
  const r = await run(args);
  const out = r.stdout.trim() || r.stderr.trim();
  let parsed: { result?: any; error?: unknown };
  try {
    parsed = JSON.parse(out);
  } catch {
    throw new Error(`inspector (exit ${r.code}) printed no JSON:\n${r.stdout}\n${r.stderr}`);
  }
  if (r.code !== 0 || parsed.error) throw new Error(`inspector ${method.join(' ')} failed (exit ${r.code}): ${out}`);
  return parsed;
}

/** mcp-remote started as a desktop host starts it, spoken to with newline-delimited JSON-RPC over stdio. */
class StdioHost {
  private buf = '';
  private nextId = 1;
  private readonly waiting = new Map<number, (m: any) => void>();
  stderr = '';
  private constructor(private readonly child: ChildProcess) {
    child.stdout!.on('data', (b: Buffer) => {
      this.buf += b.toString();
      for (let i = this.buf.indexOf('\n'); i >= 0; i = this.buf.indexOf('\n')) {
        const line = this.buf.slice(0, i).trim();
        this.buf = this.buf.slice(i + 1);
        if (!line) continue;
        const msg = JSON.parse(line);
        if (msg.id !== undefined) this.waiting.get(msg.id)?.(msg);
      }
    });
    child.stderr!.on('data', (b: Buffer) => (this.stderr += b.toString()));
  }

  /** `{"command": "npx", "args": ["mcp-remote", url, ...args], "env": env}` */
  static start(args: string[], env: Record<string, string>): StdioHost {
    const child = spawn(process.execPath, [mcpRemoteBin, ...args], { env: { ...process.env, HOME: scratch, MCP_REMOTE_CONFIG_DIR: path.join(scratch, 'mcp-auth'), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    return new StdioHost(child);
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`mcp-remote: no answer to ${method} in 30 s; its log:\n${this.stderr}`)), 30_000);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(m);
      });
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string): void {
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const closed = new Promise((r) => this.child.once('close', r));
    this.child.stdin!.end();
    this.child.kill('SIGTERM');
    await closed;
  }
}

/** The SDK v2 client on the gateway's MCP server; transport errors (e.g. a refused GET stream) are collected. */
async function v2Client(key: string, mode: 'legacy' | { pin: string }): Promise<{ client: Client; errors: string[] }> {
  const errors: string[] = [];
  const client = new Client({ name: 'e2e-sdk-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  client.onerror = (e) => errors.push(String(e));
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { requestInit: { headers: { 'X-API-Key': key } } }));
  return { client, errors };
}

function expectGoverned(r: CallResult, text: string, method: string): void {
  expect(r.isError).toBeFalsy();
  expect(r.content).toEqual([{ type: 'text', text }]);
  const id = r._meta?.['io.agw/action_id'];
  expect(id).toEqual(expect.stringMatching(UUID));
  seen.push({ id: id as string, method });
}

beforeAll(async () => {
  everything = await startServerEverything();
  t = await newTenant('MCP clients');
  const reg = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'everything', url: everything.url } });
  expect(reg.status).toBe(201);
  expect(reg.body.status).toBe('connected');
  // the catalog's prompts (`prompt:<name>`, docs/federation.md "Resources, prompts and completions") are not tools
  federated = reg.body.tools
    .filter((x: { name: string; state: string; definition: { execution?: { taskSupport?: string } } }) => x.state === 'active' && !x.name.startsWith('prompt:') && x.definition.execution?.taskSupport !== 'required')
    .map((x: { federated_name: string }) => x.federated_name)
    .sort();
  expect(federated).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum']));
  const k = await api('POST', '/api-keys', { key: t.apiKey, body: { scope: 'agent', name: 'mcp-clients' } });
  expect(k.status).toBe(201);
  agentKey = k.body.api_key;
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await everything?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('MCP Inspector CLI 2.12', () => {
  const cases: Array<[string, 'legacy' | 'modern', () => string]> = [
    ['tenant key', 'legacy', () => t.apiKey],
    ['tenant key', 'modern', () => t.apiKey],
    // before the 405 fix, the agent key's legacy case listed no tools at all and exited 0
    ['agent key', 'legacy', () => agentKey],
    ['agent key', 'modern', () => agentKey],
  ];

  test.each(cases)('with the %s, %s era: tools/list gives the upstream tools, tools/call runs get-sum and echo', async (_who, era, key) => {
    const list = await inspector(key(), era, ['--method', 'tools/list']);
    expect(list.result.tools.map((x: { name: string }) => x.name).sort()).toEqual(federated);
    const echo = list.result.tools.find((x: { name: string }) => x.name === 'everything__echo');
    expect(echo).toMatchObject({ title: 'Echo Tool', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } });

    const sum = await inspector(key(), era, ['--method', 'tools/call', '--tool-name', 'everything__get-sum', '--tool-arg', 'a=2', 'b=3']);
    expectGoverned(sum.result, 'The sum of 2 and 3 is 5.', 'get-sum');
    const said = `inspector ${era}`;
    const echoed = await inspector(key(), era, ['--method', 'tools/call', '--tool-name', 'everything__echo', '--tool-args-json', JSON.stringify({ message: said })]);
    expectGoverned(echoed.result, `Echo: ${said}`, 'echo');
    if (era === 'modern') expect(echoed.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'agw-governance-gateway' });
  });
});

describe('mcp-remote 0.15 over stdio, as a desktop host runs it', () => {
  test.each([
    ['tenant key', () => t.apiKey],
    ['agent key', () => agentKey],
  ])('with the %s in --header "X-API-Key:${AGW_KEY}": initialize, tools/list, tools/call', async (_who, key) => {
    // the host's config: "args": ["mcp-remote", url, "--header", "X-API-Key:${AGW_KEY}"], "env": {"AGW_KEY": "…"};
    // mcp-remote expands ${AGW_KEY} itself
    const host = StdioHost.start([MCP_URL, '--header', 'X-API-Key:${AGW_KEY}'], { AGW_KEY: key() });
    try {
      const init = await host.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e-desktop-host', version: '1.0.0' } });
      expect(init.result).toMatchObject({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'agw-governance-gateway' } });
      host.notify('notifications/initialized');
      const list = await host.request('tools/list');
      expect(list.result.tools.map((x: { name: string }) => x.name).sort()).toEqual(federated);
      const sum = await host.request('tools/call', { name: 'everything__get-sum', arguments: { a: 19, b: 23 } });
      expectGoverned(sum.result, 'The sum of 19 and 23 is 42.', 'get-sum');
      const echo = await host.request('tools/call', { name: 'everything__echo', arguments: { message: 'via mcp-remote' } });
      expectGoverned(echo.result, 'Echo: via mcp-remote', 'echo');
      expect(host.stderr).toContain('Proxy established successfully');
      // what the host writes to its MCP log: no error from the gateway (a 403 on the GET stream was one), and no key
      expect(host.stderr).not.toMatch(/Error from remote server|Forbidden|Unauthorized/);
      expect(host.stderr).not.toContain(key());
    } finally {
      await host.stop();
    }
  });
});

describe('the official SDK v2 client (@modelcontextprotocol/client 2.4) with an agent key', () => {
  test.each([
    ['legacy', 'legacy' as const, '2025-11-25'],
    ['pinned to 2026-07-28', { pin: '2026-07-28' }, '2026-07-28'],
  ])('%s: lists the tools and calls echo and get-sum', async (_label, mode, version) => {
    const { client, errors } = await v2Client(agentKey, mode);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
      expect(client.getProtocolEra()).toBe(version === '2025-11-25' ? 'legacy' : 'modern');
      expect(client.getServerVersion()).toMatchObject({ name: 'agw-governance-gateway' });
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(federated);
      expectGoverned((await client.callTool({ name: 'everything__echo', arguments: { message: `sdk v2 ${version}` } })) as CallResult, `Echo: sdk v2 ${version}`, 'echo');
      expectGoverned((await client.callTool({ name: 'everything__get-sum', arguments: { a: 40, b: 2 } })) as CallResult, 'The sum of 40 and 2 is 42.', 'get-sum');
      // the legacy era's GET stream is answered 405 (optional per the transport spec), not an error
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

test('every call the clients made went through the governed pipeline and is in the audit log', async () => {
  expect(seen.length).toBeGreaterThan(0);
  const log = await api('GET', '/audit/log?limit=100', { key: t.apiKey });
  expect(log.status).toBe(200);
  for (const s of seen) {
    expect(log.body.records.find((r: { action_id: string }) => r.action_id === s.id)).toMatchObject({ tool: 'everything', method: s.method, decision: 'allow' });
  }
});
