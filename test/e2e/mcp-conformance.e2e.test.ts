/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, npm) against the gateway's MCP
 * server, every active server scenario, with the baseline of those that do not apply
 * (mcp-conformance.baseline.yaml, each with its reason). The suite's client sends no credentials, so it
 * talks to a small proxy of this test on 127.0.0.1 that adds the tenant's API key and forwards everything
 * else as it came (Host and Origin included, for the DNS-rebinding scenario). The CLI runs on the project's
 * Node.js (.node-version: 24; its bundle imports `fs.globSync`, which Node 22 added).
 *
 * The same suite also runs through one upstream's own endpoint (`/api/mcp/server/upstreams/everything`,
 * `@modelcontextprotocol/server-everything` behind it), with a baseline of its own
 * (mcp-conformance-upstream.baseline.yaml).
 *
 * The tenant: rate limit lifted (the suite opens a session per scenario), a broker credential for the
 * suite's `test_error_handling` tool and a custom Rego rule that denies it: the suite's error scenario then
 * meets a real governed denial (an `isError` result).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ReferenceServer, startServerEverything } from '@agw/mcp-fixtures';
import { type Tenant, api, newTenant } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

jest.setTimeout(240_000);

const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'logging-set-level', 'dns-rebinding-protection', 'resources-list', 'prompts-list'];

/** what must pass through one upstream's own endpoint with server-everything behind it */
const UPSTREAM_REQUIRED = ['server-initialize', 'ping', 'logging-set-level', 'tools-list', 'dns-rebinding-protection', 'resources-list', 'prompts-list'];

let t: Tenant;
const proxies: http.Server[] = [];
let proxyUrl: string;
let everything: ReferenceServer;
let upstreamProxyUrl: string;

beforeAll(async () => {
  t = await newTenant('Conformance');
  const deny = ['package agw.custom', '', 'import rego.v1', '', 'deny contains "the conformance suite’s error tool is always refused" if {', '  input.tool == "test_error_handling"', '}', ''].join('\n');
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 1000, rate_limit_burst: 1000, policy_template: 'custom', custom_policy: deny } })).status).toBe(200);
  const cred = await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: 'test_error_handling', name: 'conformance', value: 'conformance-not-a-secret', credential_type: 'bearer', upstream_url: 'http://127.0.0.1:9/never' } });
  expect(cred.status).toBeLessThan(300);
  proxyUrl = await keyProxy(`${E2E_BASE_URL}/mcp/server`);
  everything = await startServerEverything();
  expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'everything', url: everything.url } })).body.status).toBe('connected');
  upstreamProxyUrl = await keyProxy(`${E2E_BASE_URL}/mcp/server/upstreams/everything`);
});

/** A proxy on 127.0.0.1 that adds the tenant's API key and forwards everything else as it came. */
async function keyProxy(to: string): Promise<string> {
  const target = new URL(to);
  const proxy = http.createServer((req, res) => {
    const up = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: { ...req.headers, authorization: `Bearer ${t.apiKey}` } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => res.writeHead(502).end(String(e)));
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxies.push(proxy);
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}

/** The suite's server scenarios against one URL with a baseline: its summary (a non-zero exit throws). */
async function conformance(url: string, baseline: string): Promise<string> {
  const cli = require.resolve('@modelcontextprotocol/conformance/dist/index.js', { paths: [__dirname] });
  const child = spawn(process.execPath, [cli, 'server', '--url', url, '--expected-failures', path.join(__dirname, baseline)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (out += b));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  const summary = out.slice(out.indexOf('=== SUMMARY ==='));
  if (code !== 0) throw new Error(`conformance suite exited ${code}:\n${summary || out.slice(-4000)}`);
  expect(summary).toContain('Baseline check passed');
  return summary;
}

afterAll(async () => {
  for (const p of proxies) {
    p.closeAllConnections();
    await new Promise((r) => p.close(r));
  }
  await everything?.close();
});

test('the official conformance suite passes every server scenario that applies to a gateway', async () => {
  const summary = await conformance(proxyUrl, 'mcp-conformance.baseline.yaml');
  for (const s of REQUIRED) expect(summary).toMatch(new RegExp(`✓ ${s}: [1-9]\\d* passed, 0 failed`));
});

test('through one upstream’s own endpoint (/mcp/server/upstreams/everything), governed, against the reference server', async () => {
  const summary = await conformance(upstreamProxyUrl, 'mcp-conformance-upstream.baseline.yaml');
  for (const s of UPSTREAM_REQUIRED) expect(summary).toMatch(new RegExp(`✓ ${s}: [1-9]\\d* passed, 0 failed`));
  // the upstream's own names there, and a call of one is governed: recorded with the upstream as the tool
  const client = new Client({ name: 'e2e-upstream-endpoint', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/mcp/server/upstreams/everything`), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
  const names = (await client.listTools()).tools.map((x) => x.name);
  expect(names).toContain('echo');
  expect(names.filter((n) => n.includes('__'))).toEqual([]);
  const echoed = await client.callTool({ name: 'echo', arguments: { message: 'through its own endpoint' } });
  expect(echoed.content).toEqual([{ type: 'text', text: 'Echo: through its own endpoint' }]);
  const log = await api('GET', '/audit/log?limit=50', { key: t.apiKey });
  expect(log.body.records.find((r: { action_id: string }) => r.action_id === echoed._meta?.['io.agw/action_id'])).toMatchObject({ tool: 'everything', method: 'echo', decision: 'allow' });
  await client.close();
  // an unknown upstream is a 404, never an empty server
  const missing = await fetch(`${E2E_BASE_URL}/mcp/server/upstreams/nothing-here`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  expect(missing.status).toBe(404);
});

test('a browser page of another origin is refused before authentication; a disallowed Host too (local profile)', async () => {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } };
  const post = (headers: Record<string, string>) =>
    fetch(`${E2E_BASE_URL}/mcp/server`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.apiKey}`, ...headers }, body: JSON.stringify(init) });
  const evil = await post({ origin: 'https://evil.example.com' });
  expect(evil.status).toBe(403);
  expect(await evil.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/Origin https:\/\/evil\.example\.com/) } });
  expect((await post({ origin: new URL(E2E_BASE_URL).origin })).status).toBe(200);
  expect((await post({})).status).toBe(200);
  // the refusal comes before authentication: no key is needed to be turned away
  const anonymous = await fetch(`${E2E_BASE_URL}/mcp/server`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example.com' }, body: '{}' });
  expect(anonymous.status).toBe(403);
  // a discovery document the gateway does not publish is a JSON 404, never the console's page
  const wellKnown = await fetch(`${new URL(E2E_BASE_URL).origin}/.well-known/not-a-discovery-document`);
  expect(wellKnown.status).toBe(404);
  expect(wellKnown.headers.get('content-type')).toMatch(/application\/json/);
});
