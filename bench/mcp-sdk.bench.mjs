#!/usr/bin/env node
// What serving MCP costs per request with each SDK, on this machine (docs/mcp.md, "SDK v1 and v2"): the same
// two tools answered statelessly (a fresh server per request, as the gateway serves) by
//   v1    @modelcontextprotocol/sdk 1.32 (the gateway's server side today, 2025 revisions)
//   v2    @modelcontextprotocol/server 2.4 createMcpHandler (both eras in one entry)
//   v2json  @modelcontextprotocol/server 2.4, v1's shape: a Server and a web-standard transport per request, JSON
//           answers (2025 revisions)
//   v2node  the same through @modelcontextprotocol/node 2.1 (node's req/res, as express hands them)
//   hand  JSON-RPC dispatched by hand on node:http (the shape of the gateway's own 2026-07-28 module)
// each in its own process (bench/support/mcp-sdk-server.mjs), loaded with autocannon; CPU per request from
// /proc/<pid>/stat. `tools/call` of a 2025-11-25 client and of a 2026-07-28 client. Figures are printed,
// never asserted.
//
//   node bench/mcp-sdk.bench.mjs [--duration 6] [--connections 16] [--rounds 2]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return Number(i >= 0 ? args[i + 1] : d);
};
const DURATION = opt('duration', 6);
const CONNECTIONS = opt('connections', 16);
const ROUNDS = opt('rounds', 2);
const PORT = 9410;
const TICK = 100; // USER_HZ on Linux

const call = (era) => {
  const params = { name: 'echo', arguments: { message: 'hello' } };
  if (era === '2026') params._meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (era === '2026') Object.assign(headers, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' });
  else headers['mcp-protocol-version'] = '2025-11-25';
  return { headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }) };
};

const cpuTicks = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
};

async function start(kind) {
  const child = spawn(process.execPath, [path.join(HERE, 'support/mcp-sdk-server.mjs'), kind, String(PORT)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('MCP_READY') && resolve());
    child.on('exit', (c) => reject(new Error(`${kind} exited ${c}`)));
  });
  return child;
}

async function measure(kind, era) {
  const child = await start(kind);
  try {
    const { headers, body } = call(era);
    const probe = await fetch(`http://127.0.0.1:${PORT}/mcp`, { method: 'POST', headers, body });
    const text = await probe.text();
    if (!probe.ok || !text.includes('Echo: hello')) throw new Error(`${kind} ${era}: ${probe.status} ${text.slice(0, 200)}`);
    await autocannon({ url: `http://127.0.0.1:${PORT}/mcp`, method: 'POST', headers, body, connections: CONNECTIONS, duration: 2 }); // warm-up
    const before = cpuTicks(child.pid);
    const r = await autocannon({ url: `http://127.0.0.1:${PORT}/mcp`, method: 'POST', headers, body, connections: CONNECTIONS, duration: DURATION });
    const ticks = cpuTicks(child.pid) - before;
    const n = r.requests.total;
    return { kind, era, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, cpuUsPerReq: (ticks / TICK / n) * 1e6 };
  } finally {
    child.kill();
  }
}

const CASES = [
  ['v1', '2025'],
  ['v2', '2025'],
  ['v2json', '2025'],
  ['v2node', '2025'],
  ['v2', '2026'],
  ['hand', '2026'],
];
const results = new Map();
for (let round = 0; round < ROUNDS; round++) {
  for (const [kind, era] of CASES) {
    const r = await measure(kind, era);
    const key = `${kind} ${era}`;
    results.set(key, [...(results.get(key) ?? []), r]);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`MCP tools/call, stateless, ${CONNECTIONS} connections, ${DURATION} s x ${ROUNDS} rounds (median of rounds); node ${process.version}`);
console.log('| server | client revision | CPU µs / request | req/s | p50 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|---|---|');
for (const [key, rs] of results) {
  const [kind, era] = key.split(' ');
  console.log(`| ${kind} | ${era === '2026' ? '2026-07-28' : '2025-11-25'} | ${median(rs.map((r) => r.cpuUsPerReq)).toFixed(0)} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${rs.reduce((s, r) => s + r.non2xx, 0)} |`);
}
