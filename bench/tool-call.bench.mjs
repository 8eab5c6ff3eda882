#!/usr/bin/env node
// End-to-end latency and throughput of POST /api/mcp/tools/call through the whole fleet (gateway ->
// policy -> audit commit -> NATS publish), on this machine. Starts its own fleet (port offset 3000,
// database agw_bench), signs up a tenant with a high rate limit, warms up, then measures:
//   - sequential: one call at a time (latency percentiles)
//   - concurrent: C calls in flight (throughput)
// Prints figures; asserts nothing.  Usage: node bench/tool-call.bench.mjs [--n 2000] [--concurrency 16]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const N = arg('n', 2000);
const C = arg('concurrency', 16);
const OFFSET = 3000; // gRPC ports are 50051+: the offset must keep them under 65536
const BASE = `http://127.0.0.1:${8080 + OFFSET}/api`;

const fleet = spawn(process.execPath, [path.join(ROOT, 'scripts/fleet.mjs'), '--offset', String(OFFSET), '--db', 'agw_bench', '--prefix', 'BENCH', '--quiet'], {
  cwd: ROOT,
  env: { ...process.env, LOG_LEVEL: 'warn', AUTH_RATE_LIMIT_PER_MINUTE: '100000' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise((resolve, reject) => {
  let out = '';
  fleet.stdout.on('data', (b) => {
    out += b;
    if (out.includes('FLEET_READY')) resolve();
  });
  fleet.once('exit', (c) => reject(new Error(`fleet exited ${c}`)));
});

const steps = {};
async function post(p, body, key, collect = false) {
  const res = await fetch(BASE + p, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) }, body: JSON.stringify(body) });
  if (collect) {
    // Server-Timing: pii;dur=0.41, constraints;dur=0.30, policy;dur=1.20, ...
    for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
      const m = part.trim().match(/^([a-z_]+);dur=([\d.]+)$/);
      if (m) (steps[m[1]] ??= []).push(Number(m[2]));
    }
  }
  return { status: res.status, body: await res.json() };
}
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

try {
  const s = await post('/auth/signup', { email: `bench-${Date.now()}@bench.test`, password: 'bench-password-123', tenant_name: 'Bench' });
  const key = s.body.api_key;
  await fetch(`${BASE}/dashboard/settings`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ rate_limit_rps: 100000, rate_limit_burst: 100000, policy_config: { daily_action_limit: 1000000, anomaly_threshold: 1 } }) });
  // (a benchmark's burst is anomalous by design: the anomaly threshold is lifted so every call is allowed)
  const body = { agent_id: 'bench', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'benchmark', page: 1 } };
  for (let i = 0; i < 200; i++) await post('/mcp/tools/call', body, key); // warm-up
  const lat = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = await post('/mcp/tools/call', body, key, true);
    lat.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.body)}`);
  }
  lat.sort((a, b) => a - b);
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (done < N) {
        done++;
        await post('/mcp/tools/call', body, key);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  console.log(`tool call, allowed, general template, ${N} calls (node ${process.version}, ${(await import('node:os')).cpus().length} cores)`);
  console.log(`  sequential latency ms: p50 ${pct(lat, 50).toFixed(2)}  p95 ${pct(lat, 95).toFixed(2)}  p99 ${pct(lat, 99).toFixed(2)}  max ${lat[lat.length - 1].toFixed(2)}`);
  console.log(`  concurrency ${C}: ${(N / secs).toFixed(0)} calls/s`);
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(`  gateway-side steps, median ms (Server-Timing): ${Object.entries(steps).map(([k, v]) => `${k} ${med(v).toFixed(2)}`).join(', ')}`);
  const verify = await fetch(`${BASE}/audit/verify`, { headers: { 'x-api-key': key } }).then((r) => r.json());
  console.log(`  audit chain after the run: valid=${verify.valid} records=${verify.record_count}`);
} finally {
  fleet.kill('SIGTERM');
}
