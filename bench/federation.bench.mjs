#!/usr/bin/env node
// What federation adds to a call of a real upstream MCP server, on this machine.
//
//   npm run bench:federation -- [--n 500] [--duration 8] [--connections 32] [--fleet URL]
//
// Starts a private fleet (scripts/fleet.mjs at port offset 6000, database agw_fed_bench, JetStream prefix
// FEDB) unless --fleet points at a running one, and `@modelcontextprotocol/server-everything` in its
// Streamable HTTP mode beside it. Signs up one tenant (rate limit, daily limit and anomaly threshold
// lifted), registers the server as upstream `everything`, then measures the `echo` tool:
//   1. concurrency 1, N calls each, alternating: direct (the SDK's client on the upstream) and federated
//      (the SDK's client on the gateway's MCP server, `everything__echo`): latency percentiles, and the
//      added latency (federated p50 - direct p50). The federated call is the whole governed pipeline
//      (policy, audit commit, NATS publish) plus the upstream call made by the vault.
//   2. the same on the HTTP entrance (POST /api/mcp/tools/call), with the gateway-side steps from the
//      Server-Timing header: `broker` is the federation hop itself (gateway -> vault -> upstream -> back),
//      so `broker` p50 - direct p50 is what federation adds to the upstream call, apart from governance.
//   3. throughput with C clients in flight for D seconds each, direct and federated: calls/s and ratio.
// Figures are printed, never asserted.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, opt } from './support/cli.mjs';

const N = Number(opt('n', '500'));
const DURATION = Number(opt('duration', '8'));
const CONNECTIONS = Number(opt('connections', '32'));
const EXTERNAL = opt('fleet', '');
const OFFSET = 6000; // gRPC ports 56051+: under 65536, clear of tool-call.bench (3000), load (5000), faults (7000), e2e (10000)
const BASE = EXTERNAL || `http://127.0.0.1:${8080 + OFFSET}/api`;

// the SDK as the vault resolves it (the same version federation runs), the upstream from the root
const vaultRequire = createRequire(path.join(ROOT, 'services/vault/package.json'));
const sdk = (p) => import(pathToFileURL(vaultRequire.resolve(`@modelcontextprotocol/sdk/${p}`)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const everythingEntry = createRequire(path.join(ROOT, 'package.json')).resolve('@modelcontextprotocol/server-everything/dist/index.js');

const children = [];
const stopAll = () => children.forEach((c) => c.exitCode === null && c.kill('SIGTERM'));
process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

function startFleet() {
  const env = { ...process.env, LOG_LEVEL: 'warn', AUTH_RATE_LIMIT_PER_MINUTE: '100000', MERKLE_SCHEDULE_ENABLED: 'false', ANCHOR_SCHEDULE_ENABLED: 'false' };
  if (!process.env.ANTHROPIC_API_KEY) Object.assign(env, { ANTHROPIC_API_KEY: 'bench-no-platform', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
  const fleet = spawn(process.execPath, [path.join(ROOT, 'scripts/fleet.mjs'), '--offset', String(OFFSET), '--db', 'agw_fed_bench', '--prefix', 'FEDB', '--quiet'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(fleet);
  return new Promise((resolve, reject) => {
    let out = '';
    fleet.stdout.on('data', (b) => {
      out += b;
      if (out.includes('FLEET_READY')) resolve();
    });
    fleet.once('exit', (c) => reject(new Error(`fleet exited ${c}: ${out}`)));
  });
}

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startUpstream() {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingEntry, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  children.push(child);
  for (let i = 0; i < 300; i++) {
    const up = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
      s.on('error', () => r(false));
    });
    if (up) return `http://127.0.0.1:${port}/mcp`;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server-everything did not start');
}

async function api(method, p, key, body) {
  const res = await fetch(BASE + p, { method, headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, headers: res.headers, body: await res.json().catch(() => null) };
}

async function client(url, key) {
  const c = new Client({ name: 'agw-federation-bench', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}));
  return c;
}

const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (a) => `p50 ${pct(a, 50).toFixed(2)}  p95 ${pct(a, 95).toFixed(2)}  p99 ${pct(a, 99).toFixed(2)}`;

async function timedCall(c, name, i) {
  const t0 = performance.now();
  const r = await c.callTool({ name, arguments: { message: `bench ${i}` } });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return ms;
}

async function throughput(clients, name) {
  let calls = 0;
  const end = performance.now() + DURATION * 1000;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < end) {
        await c.callTool({ name, arguments: { message: `t ${calls}` } });
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - t0) / 1000);
}

try {
  if (!EXTERNAL) await startFleet();
  const upstreamUrl = await startUpstream();
  const s = await api('POST', '/auth/signup', null, { email: `fed-bench-${Date.now()}@bench.test`, password: 'bench-password-123', tenant_name: 'Federation bench' });
  const key = s.body.api_key;
  await api('PATCH', '/dashboard/settings', key, { rate_limit_rps: 100000, rate_limit_burst: 100000, policy_config: { daily_action_limit: 10000000, anomaly_threshold: 1 } });
  const reg = await api('POST', '/upstreams', key, { name: 'everything', url: upstreamUrl });
  if (reg.status !== 201 || reg.body.status !== 'connected') throw new Error(`registration: ${reg.status} ${JSON.stringify(reg.body)}`);

  const direct = await client(upstreamUrl);
  const gateway = await client(`${BASE}/mcp/server`, key);
  for (let i = 0; i < 100; i++) {
    await timedCall(direct, 'echo', i);
    await timedCall(gateway, 'everything__echo', i);
  }
  const d1 = [];
  const f1 = [];
  for (let i = 0; i < N; i++) {
    d1.push(await timedCall(direct, 'echo', i));
    f1.push(await timedCall(gateway, 'everything__echo', i));
  }

  // the HTTP entrance, with the gateway's own step timings
  const steps = {};
  const h1 = [];
  const body = { agent_id: 'bench', agent_type: 'assistant', agent_version: '1.0.0', tool: 'everything', method: 'echo', params: { message: 'bench' } };
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = await api('POST', '/mcp/tools/call', key, body);
    h1.push(performance.now() - t0);
    if (r.status !== 200 || r.body.execution_result?.status_code !== 200) throw new Error(`HTTP entrance: ${r.status} ${JSON.stringify(r.body)}`);
    for (const part of (r.headers.get('server-timing') ?? '').split(',')) {
      const m = part.trim().match(/^([a-z_]+);dur=([\d.]+)$/);
      if (m) (steps[m[1]] ??= []).push(Number(m[2]));
    }
  }

  const dClients = [direct, ...(await Promise.all(Array.from({ length: CONNECTIONS - 1 }, () => client(upstreamUrl))))];
  const fClients = [gateway, ...(await Promise.all(Array.from({ length: CONNECTIONS - 1 }, () => client(`${BASE}/mcp/server`, key))))];
  const dRate = await throughput(dClients, 'echo');
  const fRate = await throughput(fClients, 'everything__echo');

  console.log(`federation: server-everything "echo", ${N} calls per series (node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)})`);
  console.log(`  concurrency 1, ms      direct     ${fmt(d1)}`);
  console.log(`                         federated  ${fmt(f1)}   (MCP client -> gateway MCP server -> governed pipeline -> vault -> upstream)`);
  console.log(`  added latency, p50:    ${(pct(f1, 50) - pct(d1, 50)).toFixed(2)} ms  (the whole governed call)`);
  console.log(`  HTTP entrance, ms      ${fmt(h1)}`);
  console.log(`  gateway steps, p50 ms: ${Object.entries(steps).map(([k, v]) => `${k} ${pct(v, 50).toFixed(2)}`).join(', ')}`);
  if (steps.broker) console.log(`  federation hop, p50:   ${(pct(steps.broker, 50) - pct(d1, 50)).toFixed(2)} ms over the direct call  (broker step: gateway -> vault -> upstream -> back)`);
  console.log(`  throughput, ${CONNECTIONS} clients: direct ${dRate.toFixed(0)} calls/s, federated ${fRate.toFixed(0)} calls/s, ratio ${(fRate / dRate).toFixed(3)}`);
  await Promise.all([...dClients, ...fClients].map((c) => c.close().catch(() => undefined)));
} finally {
  stopAll();
}
