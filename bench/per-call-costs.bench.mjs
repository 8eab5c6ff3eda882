#!/usr/bin/env node
// CPU per call of single steps of the governed path, before and after a change, measured where they act
// (the whole-fleet bench cannot resolve a few µs on a shared 2-core machine). Runs what is built.
//
//   node bench/per-call-costs.bench.mjs [--rounds 3] [--before <git rev of the policy's behavior-store>]
//                                       [--checkout DIR]   (case 8: a built checkout of an earlier commit)
//
// Each case runs its "before" and "after" alternately, `rounds` times, and prints µs of CPU per call
// (process.cpuUsage; for the policy's Redis writes also redis-server's utime+stime from /proc, which is
// shared with anything else using that Redis). Figures are printed, never asserted.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1] : d);
const ROUNDS = Number(opt('rounds', '3'));
const gwRequire = createRequire(path.join(ROOT, 'services/gateway/dist/main.js'));
const policyRequire = createRequire(path.join(ROOT, 'services/policy/dist/main.js'));
const shared = gwRequire('@agw/shared');

function redisTicks() {
  try {
    const pid = execFileSync('pgrep', ['-o', '-x', 'redis-server']).toString().trim();
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
}

async function measure(fn, n) {
  const r0 = redisTicks();
  const t0 = process.cpuUsage();
  await fn(n);
  const d = process.cpuUsage(t0);
  return { node: (d.user + d.system) / n, redis: ((redisTicks() - r0) * 10_000) / n };
}

async function compare(name, n, before, after, { redis = false } = {}) {
  await before(Math.min(n, 2000));
  await after(Math.min(n, 2000)); // warm-up (JIT)
  const rows = { before: [], after: [] };
  for (let i = 0; i < ROUNDS; i++) {
    rows.before.push(await measure(before, n));
    rows.after.push(await measure(after, n));
  }
  const fmt = (xs, k) => xs.map((x) => x[k].toFixed(2)).join(', ');
  console.log(`${name} (${n} calls × ${ROUNDS} rounds), µs of CPU per call:`);
  for (const k of ['before', 'after']) {
    console.log(`  ${k.padEnd(6)} node ${fmt(rows[k], 'node')}${redis ? `   redis-server ${fmt(rows[k], 'redis')}` : ''}`);
  }
}

// 1. gateway constraints: zod on every call, or once per stored settings object
{
  const { gatewayConstraintsSchema, parsedConstraints } = gwRequire('./pipeline/gateway-constraints');
  const settings = { rate_limit_rps: 100000, gateway_constraints: { blocked_domains: ['evil.example'] } };
  await compare(
    'gateway_constraints of the settings',
    200_000,
    (n) => {
      for (let i = 0; i < n; i++) gatewayConstraintsSchema.safeParse(settings.gateway_constraints ?? {});
    },
    (n) => {
      for (let i = 0; i < n; i++) parsedConstraints(settings.gateway_constraints);
    },
  );
}

// 2. the caller stack grpc-js captures per unary call (new Error() a few frames deep), or none
{
  const deep = (d, f) => (d ? deep(d - 1, f) : f());
  const capture = (n) => {
    for (let i = 0; i < n; i++) deep(25, () => new Error());
  };
  await compare(
    'caller stack per gRPC unary call',
    200_000,
    (n) => capture(n),
    (n) => {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        capture(n);
      } finally {
        Error.stackTraceLimit = limit;
      }
    },
  );
}

// 3. the params' JSON: stringified three times (policy params, stored params, audit entry) and parsed twice
//    in the policy service, or stringified once and parsed once (no stored_params without PII)
{
  const params = { q: 'benchmark', page: 1 };
  await compare(
    'params JSON of a call (the bench\'s params)',
    500_000,
    (n) => {
      for (let i = 0; i < n; i++) {
        const a = JSON.stringify(params);
        const b = JSON.stringify(params);
        JSON.stringify(params);
        JSON.parse(a);
        JSON.parse(b);
      }
    },
    (n) => {
      for (let i = 0; i < n; i++) JSON.parse(JSON.stringify({ ...params }));
    },
  );
}

// 4. the webhook consumer, an event of a tenant without a webhook: decode + JSON + schema parse, or the subject
{
  const { tenantOfDecisionSubject } = createRequire(path.join(ROOT, 'services/webhook/dist/main.js'))('./nats/decision.consumer');
  const e = shared.sampleDecisionEvent('0b7d3e3a-1c1f-4b8e-8d55-5c1f0f4f7a10', { agent_id: 'load-agent', record_id: 12345 });
  const data = new TextEncoder().encode(JSON.stringify(e));
  const dec = new TextDecoder();
  const subject = `LOAD.decisions.${e.tenant_id}.allowed`;
  const ok = shared.DecisionEventSchema.safeParse(e).success;
  await compare(
    `webhook consumer, event of a tenant without a webhook${ok ? '' : ' (fixture does not parse: figures of the failure path)'}`,
    100_000,
    (n) => {
      for (let i = 0; i < n; i++) shared.DecisionEventSchema.safeParse(JSON.parse(dec.decode(data)));
    },
    (n) => {
      for (let i = 0; i < n; i++) tenantOfDecisionSubject('LOAD', subject);
    },
  );
}

// 5. the policy's decision record: record script + separate score script (before), or one script (after)
{
  const before = opt('before', '');
  if (before) {
    const ts = policyRequire('typescript');
    const src = execFileSync('git', ['show', `${before}:services/policy/src/behavior/behavior-store.ts`], { cwd: ROOT }).toString();
    const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
    const file = path.join(ROOT, 'services/policy/dist/behavior/.behavior-store.before.js');
    fs.writeFileSync(file, js);
    try {
      const { BehaviorStore: Before } = policyRequire(file);
      const { BehaviorStore: After } = policyRequire('./behavior/behavior-store');
      // one connection each: both define their scripts under the same command names
      const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
      const [r1, r2] = [shared.createRedis(url), shared.createRedis(url)];
      await Promise.all([shared.waitForRedis(r1), shared.waitForRedis(r2)]);
      const stores = { before: new Before(r1), after: new After(r2) };
      const tenant = `bench-${process.pid}`;
      const run = (store) => async (n) => {
        const now = Date.now();
        for (let i = 0; i < n; i += 32) {
          await Promise.all(
            Array.from({ length: Math.min(32, n - i) }, (_, j) =>
              store.record(tenant, `agent-${j}`, { actionId: `${i + j}-${Math.random()}`, tool: 'svc_web_search', sessionId: '', amount: null, violation: false }, now),
            ),
          );
        }
      };
      await compare('policy: a decision recorded in Redis (32 concurrent)', 10_000, run(stores.before), run(stores.after), { redis: true });
      for (let j = 0; j < 32; j++) await stores.after.clear(tenant, `agent-${j}`, false);
      r1.disconnect();
      r2.disconnect();
    } finally {
      fs.rmSync(file, { force: true });
    }
  } else console.log('policy case skipped: --before <rev> names the behavior-store to compare with');
}

// 6. the audit service's publish of a committed batch (16 events): one JetStream publish + ack each
//    (publishEvent, concurrently) or the batch together (BatchPublisher); a stream of its own, removed after
if (typeof shared.BatchPublisher === 'function') {
  const bus = await shared.connectBus(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', `PERFCALL${process.pid}`, 'per-call-costs');
  const subject = shared.subjects.decision(bus.prefix, 'bench-tenant', 'allowed');
  const publisher = new shared.BatchPublisher(bus.nc);
  const event = () => ({ event_id: `${process.pid}-${Math.random()}`, kind: 'allowed', tenant_id: 'bench-tenant', action_id: `${Math.random()}`, agent_id: 'load-agent', agent_type: 'assistant', tool: 'svc_web_search', method: 'search', decision: 'allow', violations: [], severity: 'none', alert_tier: null, requires_human: false, source: 'mcp_governed', session_id: null, record_id: 1, record_hash: 'a'.repeat(64), requested_at: new Date().toISOString() });
  const batches = (fn) => async (n) => {
    for (let i = 0; i < n; i += 16) await fn(Array.from({ length: 16 }, event));
  };
  await compare(
    'audit: a committed batch\'s decision events to JetStream (batches of 16), per event',
    20_000,
    batches((events) => Promise.allSettled(events.map((e) => shared.publishEvent(bus, subject, e)))),
    batches((events) => publisher.publishAll(events.map((e) => ({ subject, event: e })))),
  );
  publisher.close();
  const jsm = await bus.nc.jetstreamManager();
  for (const s of Object.values(shared.streams(bus.prefix))) await jsm.streams.delete(s.name).catch(() => undefined);
  await bus.close();
}

// 7. a gRPC call of the hot path: unary (a call object, HEADERS + DATA + trailers each way) or multiplexed
//    over an open bidi stream (@agw/shared grpc-multiplexed.ts); PolicyService.Evaluate with a governed
//    call's request and a fixed answer, client and server in this process, 32 concurrent
{
  const { policy } = gwRequire('@agw/proto');
  const logger = shared.createLogger('bench', 'silent');
  const answer = { decision: 'allow', violations: [], severity: 'none', alert_tier: '', requires_human: false, bundle_revision: 'r1', eval_ms: 0.2, passes: 2, required_approvers: 0, decision_facts: { decision: 'allow', violations: [], severity: 'none', pii_detected: false, behavioral: { action_count_1h: 3, action_count_24h: 3, tool_count_24h: 3, violation_count_24h: 0, anomaly_score: 0, last_action_seconds_ago: 0, session_total_amount: 0 }, passes: 2, evaluated_at: '2026-11-29T09:00:00.000Z' } };
  const evaluate = async () => answer;
  const server = await shared.startGrpcServer('127.0.0.1', 0, [{ definition: policy.PolicyServiceService, implementation: shared.implement(policy.PolicyServiceService, { evaluate, evaluateStream: evaluate }, logger) }]);
  const client = shared.createClient(policy.PolicyServiceClient, `127.0.0.1:${server.port}`, 'policy engine', { deadlineMs: 5000 });
  const request = { tenant_id: '0b7d3e3a-1c1f-4b8e-8d55-5c1f0f4f7a10', action_id: '9a0f1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b', call: { agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { text: '{"q":"benchmark","page":1}' }, params_json: '{"q":"benchmark","page":1}', pii_detected: false, session_id: '' } };
  const concurrently = (fn) => async (n) => {
    for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: Math.min(32, n - i) }, fn));
  };
  await compare(
    'a gRPC call of the hot path (policy Evaluate, client + server, 32 concurrent)',
    20_000,
    concurrently(() => client.evaluate(request)),
    concurrently(() => client.evaluateStream(request)),
  );
  client.close();
  await server.close();
}

// 8. the gateway's per-call steps changed in issue 26's seventh session, with the bench's call: the PII
//    pre-check of its params, its access-log line, the input guard's walk of its body, the API key's hash
//    (twice before, once after) and the agw_policy_eval_ms observation; before = the modules of a built
//    checkout of an earlier commit (--checkout DIR), after = this one's
{
  const dir = opt('checkout', '');
  if (dir) {
    const from = (root) => ({
      gw: createRequire(path.join(root, 'services/gateway/dist/main.js')),
      pii: createRequire(path.join(root, 'services/gateway/dist/main.js'))('@agw/pii'),
    });
    const [b, a] = [from(path.resolve(dir)), from(ROOT)];
    const body = { agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'benchmark', page: 1 } };
    const loop = (f) => (n) => {
      for (let i = 0; i < n; i++) f();
    };
    await compare('gateway: PII pre-check of the bench\'s params', 200_000, loop(() => b.pii.mayContainPii(body.params)), loop(() => a.pii.mayContainPii(body.params)));
    const guard = [b, a].map((m) => m.gw('./http/input-guard').checkJson);
    await compare('gateway: the input guard\'s walk of the bench\'s body', 200_000, loop(() => guard[0](body)), loop(() => guard[1](body)));
    const { hashApiKey } = a.gw('./tenants/api-keys');
    const key = `agw_${'k'.repeat(43)}`;
    await compare('gateway: the API key hashed twice, or once', 200_000, loop(() => (hashApiKey(key), hashApiKey(key))), loop(() => hashApiKey(key)));
    const summary = (ageBuckets) => new shared.Summary({ name: `bench_eval_ms_${ageBuckets}`, help: 'b', percentiles: [0.5, 0.9, 0.99], maxAgeSeconds: 600, ageBuckets, registers: [] });
    const [s5, s2] = [summary(5), summary(2)];
    await compare('gateway: agw_policy_eval_ms observed with five age buckets, or two', 200_000, loop(() => s5.observe(Math.random())), loop(() => s2.observe(Math.random())));
    // the access-log line: in a child process whose stdout is /dev/null (the logger writes to fd 1)
    const line = (root, fixed) => `
      const s = require(${JSON.stringify(path.join(root, 'packages/shared/dist/logger.js'))});
      const log = s.createLogger('gateway', 'info');
      const access = ${fixed} ? s.fixedFieldLogger(log) : log;
      const run = (n) => { for (let i = 0; i < n; i++) access.info({ reqId: 'b3c1e2d4-5f6a-4b7c-8d9e-0f1a2b3c4d5e', method: 'POST', path: '/mcp/tools/call', status: 200, ms: 3.4, tenantId: '0b7d3e3a-1c1f-4b8e-8d55-5c1f0f4f7a10' }, 'request'); };
      run(20000);
      const t0 = process.cpuUsage(); run(100000); const d = process.cpuUsage(t0);
      process.stderr.write(String((d.user + d.system) / 100000));`;
    const child = (root, fixed) => Number(spawnSync(process.execPath, ['-e', line(root, fixed)], { stdio: ['ignore', 'ignore', 'pipe'] }).stderr.toString());
    const rows = { before: [], after: [] };
    for (let i = 0; i < ROUNDS; i++) {
      rows.before.push(child(path.resolve(dir), false));
      rows.after.push(child(ROOT, true));
    }
    console.log(`gateway: the access-log line (100000 lines × ${ROUNDS} rounds, stdout to /dev/null), µs of CPU per call:`);
    for (const k of ['before', 'after']) console.log(`  ${k.padEnd(6)} node ${rows[k].map((x) => x.toFixed(2)).join(', ')}`);
  } else console.log('gateway case skipped: --checkout DIR names a built checkout to compare with');
}

