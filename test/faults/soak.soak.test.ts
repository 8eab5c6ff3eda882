/**
 * The soak (`npm run soak`, docs/reliability.md "Soak"): a fleet of its own (port offset 7600) under mixed
 * traffic for SOAK_MINUTES (default 10): governed calls across many tenants, approvals decided by humans,
 * managed sessions on the platform stand-in, webhooks to a local HTTPS receiver, policy switches and key
 * rotations. Every SOAK_SAMPLE_SECONDS (default 30) it samples, per service, resident memory, heap, open
 * file descriptors and event-loop delay (the services' own Prometheus metrics on their ops ports), and
 * for the stores the fleet's Postgres connections, the NATS messages its consumers have not acknowledged
 * and its Redis keys and memory. A window's value is its lowest sub-sample (the floor of a GC sawtooth is
 * what a leak raises). The first SOAK_WARMUP_MINUTES (default a third of the run) are the warm-up; the rest
 * is split in two halves. It fails on sustained growth: the lowest value of the second half above the
 * lowest of the first half by more than the series' noise floor AND faster than its documented limit per
 * minute.
 */
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Redis, createRedis, waitForRedis } from '@agw/shared';
import { connect } from 'nats';
import { Client as PgClient } from 'pg';
import { type Tenant, api, fleetPids, newTenant, settings, sleep } from './support/api';
import { NATS_DIRECT, NATS_PROXY_PORT, OFFSET, PG_DIRECT_URL, PG_PROXY_PORT, ROOT, STREAM_PREFIX } from './support/env';
import { resetStores, startFleet, stopFleet } from './support/fleet';
import { LOAD_SETTINGS, Load, byStatus } from './support/load';
import { Receiver, writeReceiverCa } from './support/receiver';
import { LIMITS, type Trough, judge } from './support/soak-verdict';
import { TcpProxy } from './support/tcp-proxy';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
/** the warm-up: JIT, pools, caches, and V8 growing its heap spaces to the load (resident memory climbs) */
const WARMUP_MINUTES = Number(process.env.SOAK_WARMUP_MINUTES ?? MINUTES / 3);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 30) * 1000;
const SUB_SAMPLES = 5;
const REDIS_URL = `redis://127.0.0.1:6379/${process.env.SOAK_REDIS_DB ?? 14}`;
const STAND_IN = `http://127.0.0.1:${4010 + OFFSET}`;
const SERVICES: Record<string, number> = { gateway: 9080, policy: 9081, audit: 9082, vault: 9083, webhook: 9084, anchor: 9085, managed: 9086 };

const RUN = `s${randomBytes(3).toString('hex')}`;
jest.setTimeout((MINUTES * 60 + 300) * 1000);

const pgProxy = new TcpProxy('postgres', PG_PROXY_PORT, { host: '127.0.0.1', port: 5432 });
const natsProxy = new TcpProxy('nats', NATS_PROXY_PORT, NATS_DIRECT);
let fleetProcess: ChildProcess | undefined;
let receiver: Receiver;
let redis: Redis;

beforeAll(async () => {
  process.env.REDIS_URL = REDIS_URL; // the fleet's own Redis database: its keys are the soak's to count
  await resetStores();
  redis = createRedis(REDIS_URL);
  await waitForRedis(redis);
  await redis.flushdb();
  await pgProxy.start();
  await natsProxy.start();
  writeReceiverCa();
  receiver = await new Receiver().start();
  fleetProcess = await startFleet();
}, 240_000);

afterAll(async () => {
  await receiver?.stop();
  await stopFleet(fleetProcess);
  await pgProxy.stop();
  await natsProxy.stop();
  redis?.disconnect();
}, 60_000);

type Sample = Record<string, number>;
const GC_MAJOR = 'gc_major';

/** One sub-sample of every series: `<service>.<metric>` and the stores'. */
async function sampleOnce(pg: PgClient, js: Awaited<ReturnType<typeof natsJsm>>): Promise<Sample> {
  const out: Sample = {};
  await Promise.all(
    Object.entries(SERVICES).map(async ([name, port]) => {
      const text = await (await fetch(`http://127.0.0.1:${port + OFFSET}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      const metric = (m: string) => Number(new RegExp(`^${m}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
      out[`${name}.rss`] = metric('process_resident_memory_bytes') / 2 ** 20;
      out[`${name}.heap`] = metric('nodejs_heap_size_used_bytes') / 2 ** 20;
      // what V8 has committed for its heap, and the rest of the resident memory (native)
      out[`${name}.heap_committed`] = metric('nodejs_heap_size_total_bytes') / 2 ** 20;
      out[`${name}.native`] = out[`${name}.rss`] - out[`${name}.heap_committed`];
      out[`${name}.fds`] = metric('process_open_fds');
      out[`${name}.loop_p99`] = metric('nodejs_eventloop_lag_p99_seconds') * 1000;
      // how many major GCs it has made (not a series: it tells which heap samples are the live heap)
      out[`${name}.${GC_MAJOR}`] = Number(/^nodejs_gc_duration_seconds_count\{[^}]*kind="major"[^}]*\} ([0-9.e+-]+)$/m.exec(text)?.[1] ?? NaN);
    }),
  );
  out['postgres.pg_connections'] = Number((await pg.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows[0].n);
  let unacked = 0;
  for await (const s of js.streams.list()) {
    if (!s.config.name.startsWith(`${STREAM_PREFIX}_`)) continue;
    for await (const c of js.consumers.list(s.config.name)) unacked += c.num_pending + c.num_ack_pending;
  }
  out['nats.nats_unacked'] = unacked;
  out['redis.redis_keys'] = await redis.dbsize();
  out['redis.redis_memory'] = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN) / 2 ** 20;
  return out;
}

async function natsJsm() {
  const nc = await connect({ servers: `${NATS_DIRECT.host}:${NATS_DIRECT.port}` });
  return Object.assign(await nc.jetstreamManager(), { close: () => nc.close() });
}

/** Runs `fn` every `ms` until `until`, one at a time; counts what it did. */
function every(ms: number, until: number, fn: () => Promise<void>, errors: string[]): Promise<void> {
  return (async () => {
    while (Date.now() < until) {
      await fn().catch((e: Error) => errors.push(e.message.slice(0, 200)));
      await sleep(ms);
    }
  })();
}

test(`soak: ${MINUTES} min of mixed traffic, nothing grows past its limit`, async () => {
  const tenants: Tenant[] = [];
  for (let i = 0; i < 12; i++) tenants.push(await newTenant(`Soak ${i}`, RUN));
  for (const t of tenants) await settings(t, LOAD_SETTINGS);
  const [hooked, switching] = tenants;
  const rotating = tenants[11]; // no human session of it is used (a rotation ends the tenant's console sessions)
  const saved = await settings(hooked, { webhook_url: receiver.url, webhook_events: ['action.allowed', 'action.denied', 'action.pending'] });
  receiver.secret = saved.webhook_secret;
  const humans = new Map<string, string>();
  for (const t of tenants.slice(0, 4)) humans.set(t.tenantId, (await api('POST', '/auth/login', { body: { email: t.email, password: t.password } })).body.access_token);
  const managed = tenants.slice(4, 7);
  const configs = new Map<string, string>();
  for (const t of managed) {
    const c = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: 'soak-agent', allowed_tools: ['svc_web_search', 'svc_send_email'], require_human_approval: ['svc_send_*'] } });
    configs.set(t.tenantId, c.body.id);
    humans.set(t.tenantId, (await api('POST', '/auth/login', { body: { email: t.email, password: t.password } })).body.access_token);
  }

  const pids = await fleetPids();
  const pg = new PgClient({ connectionString: PG_DIRECT_URL });
  await pg.connect();
  const js = await natsJsm();
  const start = Date.now();
  const until = start + MINUTES * 60_000;
  const errors: string[] = [];
  const counts = { approvals: 0, sessions: 0, policy_switches: 0, key_rotations: 0, longest_queue: 0 };

  const load = new Load(tenants, RUN, 6).start();
  load.phase = 'soak';
  const activities = [
    // humans decide what is queued (policy escalations, and the managed sessions' held e-mails)
    every(2000, until, async () => {
      for (const t of tenants) {
        const token = humans.get(t.tenantId);
        if (!token) continue;
        const list = async (query: string) => (await api('GET', `/approvals${query}`, { token })).body as { pending: Array<{ action_id: string }>; total: number };
        // a session's held calls first, all of them (its platform waits): the load's escalations pile up past
        // the 500 oldest a list answers, so they are asked for by their queue reason
        const held = (await list('?queue_reason=platform_confirmation')).pending;
        const { pending: queued, total } = await list('');
        counts.longest_queue = Math.max(counts.longest_queue, total);
        const ordered = [...held, ...queued.filter((p) => !held.some((h) => h.action_id === p.action_id)).slice(0, 20)];
        for (const [i, p] of ordered.entries()) {
          if ((await api('POST', `/${i % 2 ? 'reject' : 'approve'}/${p.action_id}`, { token, body: { note: 'soak' } })).status === 200) counts.approvals++;
        }
      }
    }, errors),
    // a managed session every 5 s: a governed call, an e-mail held for a human, a built-in tool, end of turn
    every(5000, until, async () => {
      const t = managed[counts.sessions % managed.length];
      const s = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: configs.get(t.tenantId), user_message: 'soak' } });
      if (s.status !== 200) throw new Error(`session: ${s.status} ${s.text.slice(0, 120)}`);
      counts.sessions++;
      void fetch(`${STAND_IN}/_stand-in/sessions/${s.body.anthropic_session_id}/script`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          steps: [
            { mcp_call: { tool: 'svc_web_search', arguments: { method: 'search', params: { q: 'soak' } } } },
            { mcp_call: { tool: 'svc_send_email', arguments: { method: 'send', params: { to: 'soak@example.com', body: 'hello' } } } },
            { tool_use: { name: 'bash', input: { command: 'ls' } } },
            { idle: 'end_turn' },
          ],
        }),
      })
        .then((r) => r.text())
        .catch(() => undefined); // a script still held for a human when the fleet stops
    }, errors),
    every(20_000, until, async () => {
      await settings(switching, { policy_template: counts.policy_switches % 2 ? 'financial' : 'general' });
      counts.policy_switches++;
    }, errors),
    every(30_000, until, async () => {
      const r = await api('POST', '/api-keys/rotate', { key: rotating.apiKey });
      if (r.status !== 200) throw new Error(`rotate: ${r.status}`);
      rotating.apiKey = r.body.api_key;
      counts.key_rotations++;
    }, errors),
  ];

  const windows: Array<{ minute: number; values: Sample }> = [];
  // per service, its heap used right after a major GC (soak-verdict.ts: what the heap is judged on)
  const troughs: Record<string, Trough[]> = Object.fromEntries(Object.keys(SERVICES).map((s) => [s, []]));
  const majors: Record<string, number> = {};
  while (Date.now() < until) {
    const subs: Sample[] = [];
    for (let i = 0; i < SUB_SAMPLES; i++) {
      const sub = await sampleOnce(pg, js);
      for (const name of Object.keys(SERVICES)) {
        const count = sub[`${name}.${GC_MAJOR}`];
        delete sub[`${name}.${GC_MAJOR}`];
        if (Number.isFinite(majors[name]) && count > majors[name]) troughs[name].push({ minute: (Date.now() - start) / 60_000, heap: sub[`${name}.heap`] });
        if (Number.isFinite(count)) majors[name] = count;
      }
      subs.push(sub);
      await sleep(SAMPLE_MS / SUB_SAMPLES);
    }
    const values: Sample = {};
    for (const k of Object.keys(subs[0])) {
      const all = subs.map((s) => s[k]);
      values[k] = LIMITS[k.split('.')[1]]?.level === 'median' ? Math.max(...all) : Math.min(...all);
    }
    windows.push({ minute: (Date.now() - start) / 60_000, values });
  }
  const results = await load.stop();
  await Promise.all(activities);
  await js.close();
  await pg.end();

  // the verdict, per series (support/soak-verdict.ts): the level of the first half after the warm-up against
  // the second's; a floor is what a leak raises, while a GC sawtooth or a burst only moves the highs; the heap
  // on its values right after a major GC
  const { verdicts, middle, last } = judge(windows, troughs, WARMUP_MINUTES);
  const report = {
    run: RUN,
    minutes: MINUTES,
    warmup_minutes: WARMUP_MINUTES,
    sample_seconds: SAMPLE_MS / 1000,
    pids,
    calls: results.length,
    by_status: byStatus(results),
    ...counts,
    webhooks_received: receiver.got.length,
    activity_errors: errors.slice(0, 10),
    activity_error_count: errors.length,
    series: verdicts,
    heap_troughs: troughs,
  };
  const file = path.join(ROOT, '.run', `soak-summary-${OFFSET}.json`);
  writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), ...report, windows }, null, 2)}\n`);
  console.log(`[soak] ${JSON.stringify({ ...report, series: undefined, heap_troughs: undefined })}\n${verdicts.map((v) => `  ${v.grows ? 'GROWS' : v.judged ? 'ok   ' : '     '} ${v.series.padEnd(28)} ${String(v.first).padStart(8)} -> ${String(v.last).padStart(8)}  ${v.per_min}/min${v.note ? `  (${v.note})` : ''}`).join('\n')}\n  (${file})`);

  expect(verdicts.filter((v) => v.grows).map((v) => `${v.series}: ${v.first} -> ${v.last} (${v.per_min}/min, limit ${LIMITS[v.series.split('.')[1]]?.slope}/min)`)).toEqual([]);
  // the traffic really was mixed, and it worked: every activity did what it tried (no session refused
  // for a limit, no approval or rotation failed), no governed call got a 5xx or no answer
  expect(errors).toEqual([]);
  expect(results.filter((r) => r.status >= 500 || r.status === 0).length).toBe(0);
  expect(counts.sessions).toBeGreaterThan(0);
  expect(counts.approvals).toBeGreaterThan(0);
  expect(receiver.got.length).toBeGreaterThan(0);
  expect(counts.policy_switches).toBeGreaterThan(0);
  expect(counts.key_rotations).toBeGreaterThan(0);
  expect(middle.length).toBeGreaterThanOrEqual(1);
  expect(last.length).toBeGreaterThanOrEqual(1);
});
