/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, npm) against the gateway's MCP
 * server, every active server scenario, with the baseline of those that do not apply
 * (mcp-conformance.baseline.yaml, each with its reason). The suite's client sends no credentials, so it
 * talks to a small proxy of this test on 127.0.0.1 that adds the tenant's API key and forwards everything
 * else as it came (Host and Origin included, for the DNS-rebinding scenario). The CLI runs on the project's
 * Node.js (.node-version: 24; its bundle imports `fs.globSync`, which Node 22 added).
 *
 * The tenant: rate limit lifted (the suite opens a session per scenario), a broker credential for the
 * suite's `test_error_handling` tool and a custom Rego rule that denies it: the suite's error scenario then
 * meets a real governed denial (an `isError` result).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Tenant, api, newTenant } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

jest.setTimeout(240_000);

const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'logging-set-level', 'dns-rebinding-protection', 'resources-list', 'prompts-list'];

let t: Tenant;
let proxy: http.Server;
let proxyUrl: string;

beforeAll(async () => {
  t = await newTenant('Conformance');
  const deny = ['package agw.custom', '', 'import rego.v1', '', 'deny contains "the conformance suite’s error tool is always refused" if {', '  input.tool == "test_error_handling"', '}', ''].join('\n');
  expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 1000, rate_limit_burst: 1000, policy_template: 'custom', custom_policy: deny } })).status).toBe(200);
  const cred = await api('POST', '/credentials/register', { key: t.apiKey, body: { tool_id: 'test_error_handling', name: 'conformance', value: 'conformance-not-a-secret', credential_type: 'bearer', upstream_url: 'http://127.0.0.1:9/never' } });
  expect(cred.status).toBeLessThan(300);
  const target = new URL(`${E2E_BASE_URL}/mcp/server`);
  proxy = http.createServer((req, res) => {
    const up = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: { ...req.headers, authorization: `Bearer ${t.apiKey}` } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => res.writeHead(502).end(String(e)));
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
});

test('the official conformance suite passes every server scenario that applies to a gateway', async () => {
  const cli = require.resolve('@modelcontextprotocol/conformance/dist/index.js', { paths: [__dirname] });
  const child = spawn(process.execPath, [cli, 'server', '--url', proxyUrl, '--expected-failures', path.join(__dirname, 'mcp-conformance.baseline.yaml')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (out += b));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  const summary = out.slice(out.indexOf('=== SUMMARY ==='));
  if (code !== 0) throw new Error(`conformance suite exited ${code}:\n${summary || out.slice(-4000)}`);
  for (const s of REQUIRED) expect(summary).toMatch(new RegExp(`✓ ${s}: [1-9]\\d* passed, 0 failed`));
  expect(summary).toContain('Baseline check passed');
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
