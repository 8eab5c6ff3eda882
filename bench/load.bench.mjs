#!/usr/bin/env node
// Load test of the governed path against a bare express JSON echo, in ONE run, on this machine.
//
//   npm run bench:load -- [--rounds 2] [--duration 8] [--connections 32] [--rate N] [--c1 5] [--warm 10] [--fleet URL] [--cpu-prof DIR]
//                          [--checkout DIR] [--json FILE] [--node PATH] [--echo-node PATH] [--no-floor] [--single] [--shadow]
//
// Starts a private fleet (scripts/fleet.mjs at port offset 5000, database agw_load, JetStream prefix LOAD:
// never a developer's data) unless --fleet points at a running one (e.g. http://127.0.0.1:8080/api from
// `npm start`), and a bare express echo in a child process beside it. Signs up one tenant, lifts its rate
// limit, daily action limit and anomaly threshold, and runs autocannon against the echo and
// POST /api/mcp/tools/call (benign svc_web_search calls), alternating echo, gateway, echo, gateway...
// The headline is the yardstick that survives the machine (docs/performance.md): the fleet's CPU time per
// governed call divided by the echo's CPU time per request, both measured in the same run (utime+stime
// from /proc/<pid>/stat), and the gateway process's alone. Then, per governed call: every system call of
// each process (perf stat raw_syscalls:sys_enter, when perf is there), Postgres buffer hits, WAL bytes and
// transactions (pg_stat_database, pg_stat_wal), Redis commands (INFO commandstats); req/s and the ratio to
// the echo; CPU per process and its kernel (stime) share; the latency at concurrency 1; the audit chain.
// Figures are printed, never asserted.
//
// Cores: each echo round runs once on each core (the echo pinned to it with taskset, autocannon to the
// others), so the unit is the mean core's echo, and the bench prints each core's echo and each core's speed
// in CPU µs per reference operation (bench/support/core-speed.cjs on this bench's node, pinned, before and
// after the run, and sampled on each core while every measured run runs): the
// fleet's CPU per call is printed in those operations too, a second unit with no system call in it. A
// virtual machine's cores need not be equal (docs/history/performance-2026.md, "Tenth session").
//
// --checkout DIR: the private fleet of another built checkout of this repository (e.g. a `git worktree` of an
// earlier commit), in database agw_load_<name of DIR> and JetStream prefix LOADX, measured by this bench: a
// before and after on the same machine, back to back (docs/history/performance-2026.md, "Issue 26 at a glance").
//
// --node PATH: the Node.js binary that runs the private fleet (default: the one running this bench, the
// project's .node-version through `npm run bench:load`); --echo-node PATH: the one that runs the echo (default:
// --node's). A before and after across runtimes keeps the echo on one of them, so both sides are divided by
// the same unit (docs/history/performance-2026.md, "Ninth session": express's echo costs twice as much on Node 20 as on 24).
// The floors (below) run on the echo's runtime too, for the same reason.
//
// --rate N: the governed runs (and the floors') send N requests per second in all (autocannon's overallRate)
// instead of as many as the connections can: a change that costs CPU then cannot move the throughput, and
// with it what batching saves per call, so two runs compare CPU per call at the same load (a shadow's cost,
// docs/policy.md). The echo runs stay unbounded (they are the unit).
//
// --shadow: every tenant has a candidate policy in shadow (docs/policy.md, "Shadow rollout").
//
// --json FILE: the run's yardstick also written to FILE as JSON (what bench/pairs.bench.mjs reads).
//
// The shape's floor: the bench also runs the fleet's shape with no work at any hop (bench/support/shape-floor.cjs:
// a node:http gateway, a policy and an audit that only pass a call on, with every hop, store request and
// contract message of the real path) as a third contender in the same alternation, and prints its CPU per call, its throughput
// and its concurrency-1 latency beside the fleet's, and the fleet's CPU per call in floors: what the shape
// itself costs on this machine, a unit made of the same work as a governed call, which moved less than the
// echo from round to round (docs/history/performance-2026.md, "The shape's floor"). --no-floor leaves it out.
// --single: a fourth contender, the same work in ONE process (no policy or audit hop): the floor of the shape
// the fleet is not, for what a shape with policy and audit inside the gateway could reach at most.
//
// --cpu-prof DIR: the fleet's node services are profiled (V8 sampling profiler, 250 µs) during the gateway
// runs only, one DIR/<service>.<pid>.cpuprofile each (open in Chrome DevTools, or summarise with
// `node bench/profile-summary.mjs DIR`).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return i >= 0 ? args[i + 1] : d;
};
const ROUNDS = Number(opt('rounds', '2'));
const DURATION = Number(opt('duration', '8'));
const CONNECTIONS = Number(opt('connections', '32'));
const C1_DURATION = Number(opt('c1', '5'));
const WARM = Number(opt('warm', '10')); // seconds of warm-up at full concurrency before anything is measured
const TENANTS = Number(opt('tenants', '1')); // active tenants: the gateway runs rotate over their keys
const EXTERNAL = opt('fleet', '');
const CPU_PROF = opt('cpu-prof', '');
const CHECKOUT = opt('checkout', '');
const JSON_OUT = opt('json', '');
const FLOOR = !args.includes('--no-floor');
const SINGLE = args.includes('--single');
/** every tenant has a candidate policy in shadow (docs/policy.md, "Shadow rollout"): what shadowing costs the answers */
const SHADOW = args.includes('--shadow');
/** requests per second of the governed runs in all, 0: unbounded */
const RATE = Number(opt('rate', '0'));
/** the floors run beside the fleet: the shape's, and with --single the one-process one */
const FLOORS = [...(FLOOR ? ['floor'] : []), ...(SINGLE ? ['single'] : [])];
const FLEET_NODE = opt('node', process.execPath);
const ECHO_NODE = opt('echo-node', FLEET_NODE);
const nodeVersion = (bin) => (bin === process.execPath ? process.version : execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim());
/** the checkout whose fleet is measured (this one, or --checkout's) */
const ROOT = CHECKOUT ? path.resolve(CHECKOUT) : HERE;
const FLEET_DB = CHECKOUT ? `agw_load_${path.basename(ROOT).replace(/[^a-z0-9_]/gi, '_').toLowerCase()}` : 'agw_load';
const FLEET_PREFIX = CHECKOUT ? 'LOADX' : 'LOAD';
const OFFSET = 5000; // gRPC ports are 50051+: the offset keeps them under 65536, and clear of e2e (10000) and tool-call.bench (3000)
const BASE = EXTERNAL || `http://127.0.0.1:${8080 + OFFSET}/api`;
const ECHO_PORT = 8070 + OFFSET;
const FLOOR_PORTS = { gateway: 8071 + OFFSET, policy: 8072 + OFFSET, audit: 8073 + OFFSET, single: 8074 + OFFSET };
const FLOOR_DB = 'agw_floor';
const CLK_TCK = 100; // USER_HZ on Linux
/** CPU ms per request: `ticks` of utime+stime spread over `requests` */
const msPer = (ticks, requests) => (ticks / CLK_TCK / requests) * 1000;
/** the floors' own processes, named floor-<role> (floor-single: --single's) and floor-postgres (their backends) */
const isFloor = (name) => name.startsWith('floor-');
/** processes the fleet and the floors share (each runs while the others wait) */
const SHARED_STORES = ['redis', 'nats', 'postgres(server)'];
/** the fleet's part of a run's per-process counts: every group but the echo and the floors', summed */
const fleetSum = (byName) => Object.entries(byName).reduce((a, [k, v]) => (k === 'echo' || isFloor(k) ? a : a + v), 0);
/** the groups a floor's CPU is made of: its own processes, its Postgres backends and the shared stores */
const floorMember = {
  floor: (k) => (isFloor(k) && k !== 'floor-single') || SHARED_STORES.includes(k),
  single: (k) => k === 'floor-single' || k === 'floor-postgres' || SHARED_STORES.includes(k),
};
/** a floor's part of a run's per-process counts */
const floorSum = (byName, kind = 'floor') => Object.entries(byName).reduce((a, [k, v]) => (floorMember[kind](k) ? a + v : a), 0);

// ---------- processes ----------
const children = [];
function startFleet() {
  // LOG_LEVEL as the fleet's own default (info: one access-log line per request), as `npm start` runs it
  const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', AUTH_RATE_LIMIT_PER_MINUTE: '100000', MERKLE_SCHEDULE_ENABLED: 'false', ANCHOR_SCHEDULE_ENABLED: 'false' };
  // no managed sessions in this benchmark: without a platform key the fleet would start the platform
  // stand-in, whose demo sessions make governed calls of their own during the measurement
  if (!process.env.ANTHROPIC_API_KEY) Object.assign(env, { ANTHROPIC_API_KEY: 'bench-no-platform', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
  if (CPU_PROF) {
    fs.mkdirSync(CPU_PROF, { recursive: true });
    // --cpu-prof is refused in NODE_OPTIONS: a preload starts/stops the profiler on SIGUSR2 instead
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${path.join(HERE, 'bench/support/cpu-prof-preload.cjs')}`.trim();
    env.AGW_CPU_PROF_DIR = path.resolve(CPU_PROF);
  }
  const fleet = spawn(FLEET_NODE, [path.join(ROOT, 'scripts/fleet.mjs'), '--offset', String(OFFSET), '--db', FLEET_DB, '--prefix', FLEET_PREFIX, '--quiet'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(fleet);
  return new Promise((resolve, reject) => {
    let out = '';
    fleet.stdout.on('data', (b) => {
      out += b;
      if (out.includes('FLEET_READY')) resolve(fleet);
    });
    fleet.once('exit', (c) => reject(new Error(`fleet exited ${c}: ${out}`)));
  });
}

function startEcho() {
  const echo = spawn(ECHO_NODE, [path.join(HERE, 'bench/support/express-echo.cjs'), String(ECHO_PORT)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(echo);
  return new Promise((resolve, reject) => {
    echo.stdout.on('data', (b) => String(b).includes('ECHO_READY') && resolve(echo));
    echo.once('exit', (c) => reject(new Error(`echo exited ${c}`)));
  });
}

/** The floors (FLOORS): their database, then the shape's audit, policy and gateway, and --single's one process. */
async function startFloor() {
  if (psql('postgres', `SELECT count(*) FROM pg_database WHERE datname = '${FLOOR_DB}'`) === '0') psql('postgres', `CREATE DATABASE ${FLOOR_DB}`);
  const start = (role, ...rest) => {
    // on the echo's runtime: a unit, like the echo, that a before and after across runtimes share
    const child = spawn(ECHO_NODE, [path.join(HERE, 'bench/support/shape-floor.cjs'), role, ...rest.map(String)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (b) => String(b).includes('FLOOR_READY') && resolve(child));
      child.once('exit', (c) => reject(new Error(`floor ${role} exited ${c}`)));
    });
  };
  const db = `postgres://postgres@127.0.0.1:5432/${FLOOR_DB}`;
  if (FLOOR) {
    await Promise.all([start('audit', FLOOR_PORTS.audit, db), start('policy', FLOOR_PORTS.policy)]);
    await start('gateway', FLOOR_PORTS.gateway, FLOOR_PORTS.policy, FLOOR_PORTS.audit);
  }
  // after the audit role: both make the table and the stream when they start
  if (SINGLE) await start('single', FLOOR_PORTS.single, db);
}

function stopAll() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
}
process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

// ---------- /proc ----------
function readStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), sys: Number(f[12]) };
  } catch {
    return null;
  }
}
const cmdline = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
};
const pids = () => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);

/** name -> pids: the fleet's node services (by their entry file), postgres (this database's backends, and the server's own processes), redis, nats, the echo. */
function findProcesses(echoPid) {
  const groups = {};
  const add = (name, pid) => (groups[name] ??= []).push(pid);
  for (const pid of pids()) {
    const cmd = cmdline(pid);
    const svc = cmd.match(/services\/([a-z]+)\/dist\/main\.js/);
    const floor = cmd.match(/shape-floor\.cjs ([a-z]+)/);
    if (floor) {
      if (readStat(pid)?.ppid === process.pid) add(`floor-${floor[1]}`, pid);
    } else if (svc) {
      // a private fleet: only the children of our fleet.mjs (another fleet may run beside it)
      if (!EXTERNAL && readStat(pid)?.ppid !== children[0]?.pid) continue;
      add(svc[1], pid);
    } else if (/^postgres: /.test(cmd)) {
      if (cmd.includes(` ${PG_DB()} `)) add('postgres', pid);
      else if (FLOORS.length && cmd.includes(` ${FLOOR_DB} `)) add('floor-postgres', pid);
      else if (/(walwriter|checkpointer|background writer|autovacuum|logical replication|stats)/.test(cmd)) add('postgres(server)', pid);
    } else if (/redis-server/.test(cmd)) add('redis', pid);
    else if (/nats-server/.test(cmd)) add('nats', pid);
  }
  // the fleet runner itself: it copies every service's log lines into .run/logs-<offset>/
  if (!EXTERNAL && children[0]?.pid) add('fleet.mjs', children[0].pid);
  if (echoPid) add('echo', echoPid);
  return groups;
}
const SERVICES = ['gateway', 'policy', 'audit', 'vault', 'webhook', 'anchor', 'managed'];
function signalServices(groups) {
  for (const s of SERVICES) for (const pid of groups[s] ?? []) process.kill(pid, 'SIGUSR2');
}
/** write(2)-family system calls of a process (syscw of /proc/<pid>/io, all threads); null once it is gone */
function syscw(pid) {
  try {
    return Number(/syscw: (\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);
  } catch {
    return null;
  }
}
/**
 * CPU ticks and write system calls of each group over one run, counted per process: the fleet's processes
 * are found again every `everyMs` (a pool opens a Postgres backend when load grows) and each process is
 * read at every look, so one that starts during the run counts from zero and one that exits keeps what it
 * used until it was last seen. (Reading the groups only at both ends lost a backend that a pool closed
 * mid-run and subtracted what it had used before: Postgres at 0.09 ms per call in one run and 0.47 in the
 * next. A backend is closed after 10 s idle, so what it used after the last look is nothing.)
 * `startGroups`: the groups just found (the first look). Writes: on loopback a socket write runs the
 * receiver's TCP path too, so fewer writes is less CPU on both ends.
 */
function trackProcesses(echoPid, startGroups, everyMs = 500) {
  const first = new Map(); // pid -> { ticks, writes } when the run began (absent: started during it)
  const last = new Map(); // pid -> { name, ticks, writes } last seen
  const look = (atStart) => {
    for (const [name, ps] of Object.entries(atStart ? startGroups : findProcesses(echoPid)))
      for (const pid of ps) {
        const stat = readStat(pid);
        if (!stat) continue;
        const seen = { name, ticks: stat.ticks, sys: stat.sys, writes: syscw(pid) ?? last.get(pid)?.writes ?? 0 };
        if (atStart) first.set(pid, seen);
        last.set(pid, seen);
      }
  };
  look(true);
  const timer = setInterval(() => look(false), everyMs);
  return {
    /** { ticks: name -> ticks used (utime+stime), sys: name -> of them stime, writes: name -> write system calls } over the run */
    stop() {
      clearInterval(timer);
      look(false);
      const ticks = {};
      const sys = {};
      const writes = {};
      for (const [pid, { name, ticks: t, sys: st, writes: w }] of last) {
        const f = first.get(pid);
        ticks[name] = (ticks[name] ?? 0) + t - (f?.ticks ?? 0);
        sys[name] = (sys[name] ?? 0) + st - (f?.sys ?? 0);
        writes[name] = (writes[name] ?? 0) + w - (f?.writes ?? 0);
      }
      return { ticks, sys, writes };
    },
  };
}

// ---------- cores ----------
/**
 * The probes always run on the bench's own node (the project's .node-version through `npm run bench:*`),
 * whatever runs the fleet and the echo, so a reference operation is one unit for every run and both sides of
 * a pair. Not the echo's: on Node 20 the same operation took 4.7-6.0 µs from one run to the next on one core
 * where Node 24 held 2.84-2.91 (docs/history/performance-2026.md, "Tenth session").
 */
const PROBE_NODE = process.execPath;
const CPUS = os.cpus().map((_, i) => i);
/** pins every thread of `pid` to `cpus` (taskset); false when it cannot (no taskset, one core) */
function pin(pid, cpus) {
  if (CPUS.length < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus.join(','), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
/**
 * Each core's speed: CPU µs per reference operation (bench/support/core-speed.cjs, pure JavaScript, no system
 * call), run pinned to each core in turn with PROBE_NODE; [] without taskset. A virtual machine's
 * cores need not be equal (docs/history/performance-2026.md, "Tenth session"), and then a process's CPU time per request
 * depends on the core it ran on.
 */
function coreSpeeds() {
  try {
    return CPUS.map((c) => JSON.parse(execFileSync('taskset', ['-c', String(c), PROBE_NODE, path.join(HERE, 'bench/support/core-speed.cjs')], { encoding: 'utf8' })).us_per_op);
  } catch {
    return [];
  }
}
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;

/**
 * One sampling probe pinned to each core for the whole run (core-speed.cjs --sample: 200 reference operations
 * every 200 ms, under 1 % of a core). `report()` resolves to each core's CPU µs per operation since the
 * previous report (the median of its samples), so each measured run has the speed its cores had while it
 * ran. null without taskset or with one core.
 */
async function startCoreProbes() {
  if (CPUS.length < 2 || !pin(process.pid, CPUS)) return null;
  const probes = CPUS.map((c) => {
    const child = spawn('taskset', ['-c', String(c), PROBE_NODE, path.join(HERE, 'bench/support/core-speed.cjs'), '--sample', '200'], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    const waiting = [];
    let buf = '';
    child.stdout.on('data', (b) => {
      buf += b;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        waiting.shift()?.(JSON.parse(line));
      }
    });
    // a probe that exits (or never starts) answers nothing: its core's speed is unknown (NaN), not awaited
    let gone = false;
    const done = () => {
      gone = true;
      for (const w of waiting.splice(0)) w({});
    };
    child.once('exit', done);
    child.once('error', done);
    child.stdin.on('error', () => {}); // EPIPE to a probe that has exited: `done` has answered for it
    const next = () => (gone ? Promise.resolve({}) : new Promise((resolve) => waiting.push(resolve)));
    return { child, next, ready: next() };
  });
  await Promise.all(probes.map((p) => p.ready));
  return {
    async report() {
      const answers = probes.map((p) => p.next());
      for (const p of probes) if (p.child.exitCode === null) p.child.stdin.write('report\n');
      return (await Promise.all(answers)).map((a) => a.us_per_op ?? NaN);
    },
    stop() {
      for (const p of probes) p.child.stdin.end();
    },
  };
}

// ---------- system calls, Postgres, Redis ----------
let perfWorks;
/** One `perf stat raw_syscalls:sys_enter` over `pids` for `seconds`: the count, or NaN when perf could not attach. */
function perfCount(pids, seconds) {
  return new Promise((resolve) => {
    const p = spawn('perf', ['stat', '-x,', '-e', 'raw_syscalls:sys_enter', '-p', pids.join(','), '--', 'sleep', String(seconds)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (b) => (err += b));
    p.on('error', () => resolve(NaN));
    // perf prints `<not counted>` for processes that made no system call at all (fleet.mjs, now that the
    // services write their own logs)
    p.on('close', () => resolve(/^<not counted>,/m.test(err) ? 0 : Number(/^(\d+),/m.exec(err)?.[1] ?? NaN)));
  });
}

/**
 * Every system call of each group's processes for `seconds` (perf stat raw_syscalls:sys_enter); {} without perf.
 * A group of several processes (the Postgres backends and server processes) is counted one process per perf
 * and summed: perf refuses a whole list when one of its processes has exited (a backend a pool closed as
 * the run started), which left Postgres out of the total in about one run in five. A process that exited
 * counts 0; a group none of whose processes could be counted is NaN.
 */
function countSyscalls(groups, seconds) {
  if (perfWorks === false) return Promise.resolve({});
  const runs = Object.entries(groups).map(async ([name, ps]) => {
    const counts = ps.length > 1 ? await Promise.all(ps.map((pid) => perfCount([pid], seconds))) : [await perfCount(ps, seconds)];
    const counted = counts.filter(Number.isFinite);
    return [name, counted.length ? counted.reduce((a, b) => a + b, 0) : NaN];
  });
  return Promise.all(runs).then((rs) => {
    const out = Object.fromEntries(rs);
    perfWorks = Object.values(out).some(Number.isFinite);
    return out;
  });
}

const PG_DB = () => (EXTERNAL ? 'agw' : FLEET_DB);
/** one statement through psql as the local superuser; its unaligned output, trimmed */
const psql = (database, statement) => execFileSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-XAtqc', statement], { encoding: 'utf8' }).trim();
/** pg_stat_database of the fleet's database and pg_stat_wal (server-wide). */
function pgStats() {
  try {
    const q = `SELECT d.blks_hit, d.blks_read, d.xact_commit + d.xact_rollback, w.wal_bytes, w.wal_records FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = '${PG_DB()}'`;
    const [hit, read, xacts, walBytes, walRecords] = psql('postgres', q).split('|').map(Number);
    return { hit, read, xacts, walBytes, walRecords };
  } catch {
    return null;
  }
}
/** Commands Redis has served (INFO commandstats, server-wide). */
function redisCommands() {
  try {
    const info = execFileSync('redis-cli', ['-h', '127.0.0.1', 'info', 'commandstats'], { encoding: 'utf8' });
    return [...info.matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
  } catch {
    return NaN;
  }
}

/** The services' ops ports in the private fleet (scripts/fleet.mjs), for their /metrics. */
const OPS_PORTS = { gateway: 9080, policy: 9081, audit: 9082, vault: 9083, webhook: 9084, anchor: 9085, managed: 9086 };
/**
 * What each service has sent to each store so far (agw_store_requests_total, and NATS messages received:
 * packages/shared/src/store-requests.ts): { service: { postgres, redis, nats, natsIn } }; null with --fleet
 * (its ports are not ours to know); a service whose build does not count them is left out.
 */
async function storeRequestCounts() {
  if (EXTERNAL) return null;
  const out = {};
  await Promise.all(
    Object.entries(OPS_PORTS).map(async ([service, port]) => {
      try {
        const text = await (await fetch(`http://127.0.0.1:${port + OFFSET}/metrics`)).text();
        const c = { postgres: 0, redis: 0, nats: 0, natsIn: 0 };
        let found = false;
        for (const m of text.matchAll(/^agw_store_requests_total\{[^}]*store="(\w+)"[^}]*\} (\d+)/gm)) {
          c[m[1]] = Number(m[2]);
          found = true;
        }
        const received = /^agw_nats_messages_received_total(?:\{[^}]*\})? (\d+)/m.exec(text);
        if (received) c.natsIn = Number(received[1]);
        if (found || received) out[service] = c;
      } catch {
        /* not up, or not counting */
      }
    }),
  );
  return out;
}

/** Requests per governed call to each store, with the services that sent them (largest first). */
function printStoreRequests(storeCalls, calls) {
  const services = Object.entries(storeCalls);
  if (!services.length) {
    console.log('    requests per call to each store     not counted (--fleet, or a build without agw_store_requests_total)');
    return;
  }
  const line = (key) => {
    const all = services.map(([svc, c]) => [svc, c[key] / calls]);
    const total = all.reduce((a, [, v]) => a + v, 0);
    // the total counts every service; the list names those sending at least one request per 200 calls
    const by = all.filter(([, v]) => v >= 0.005).sort((a, b) => b[1] - a[1]);
    return `${fmt(total, 2)}${by.length ? ` (${by.map(([svc, v]) => `${svc} ${fmt(v, 2)}`).join(', ')})` : ''}`;
  };
  console.log('    requests per call to each store     (agw_store_requests_total, counted by the services as they send)');
  console.log(`      Postgres statements               ${line('postgres')}`);
  console.log(`      Redis commands                    ${line('redis')}`);
  console.log(`      NATS messages published           ${line('nats')}`);
  console.log(`      NATS messages received            ${line('natsIn')}`);
}

// ---------- HTTP ----------
async function api(method, p, body, key) {
  const res = await fetch(BASE + p, { method, headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * One echo round: a run on each core in turn, the echo pinned to it and this process (autocannon) to the
 * others, `duration` shared between them; one merged result, and { cpu, ticks, requests } per core in
 * `perCore` (with the core's speed while it ran, from `probes`). The fleet's runs use every core; an echo
 * measured on one core only would be the unit of that core (docs/history/performance-2026.md, "Tenth session").
 */
async function echoRound(target, body, echoPid, duration, perCore, probes) {
  const cores = CPUS.length > 1 && pin(echoPid, [0]) ? CPUS : [null];
  const parts = [];
  for (const c of cores) {
    if (c !== null) {
      pin(echoPid, [c]);
      pin(process.pid, CPUS.filter((x) => x !== c));
    }
    await probes?.report(); // the samples from here on are this run's
    const t0 = readStat(echoPid)?.ticks ?? 0;
    const r = await run(target.url, { body, headers: target.headers, connections: CONNECTIONS, duration: Math.max(1, Math.round(duration / cores.length)) });
    const ticks = (readStat(echoPid)?.ticks ?? 0) - t0;
    const speeds = await probes?.report();
    // the speed of the core the echo ran on, while it ran (without probes: NaN)
    perCore.push({ cpu: c, ticks, requests: r['2xx'], usPerOp: speeds && c !== null ? speeds[c] : NaN });
    parts.push(r);
  }
  if (cores[0] !== null) {
    pin(echoPid, CPUS);
    pin(process.pid, CPUS);
  }
  const sum = (k) => parts.reduce((a, r) => a + r[k], 0);
  return {
    requests: { total: parts.reduce((a, r) => a + r.requests.total, 0) },
    duration: sum('duration'),
    '2xx': sum('2xx'),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    latency: { p50: mean(parts.map((r) => r.latency.p50)), p99: mean(parts.map((r) => r.latency.p99)) },
  };
}

function run(url, o) {
  // several tenants: each request takes the next key in turn (one chain, rate window and cache entry each)
  let n = 0;
  const requests = o.keys?.length > 1 ? [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-api-key': o.keys[n++ % o.keys.length] } }) }] : undefined;
  return new Promise((resolve, reject) => {
    autocannon(
      { url, method: 'POST', headers: { 'content-type': 'application/json', ...(o.headers ?? {}) }, body: o.body, connections: o.connections, duration: o.duration, timeout: 10, requests, ...(o.rate ? { overallRate: o.rate } : {}) },
      (err, r) => (err ? reject(err) : resolve(r)),
    );
  });
}

/** A tenant whose limits are lifted: a benchmark's burst is anomalous and far above the defaults by design. */
async function loadTenant(i) {
  const s = await api('POST', '/auth/signup', { email: `load-${Date.now()}-${i}@bench.test`, password: 'bench-password-123', tenant_name: `Load ${i}` });
  if (s.status !== 201 && s.status !== 200) throw new Error(`signup: ${s.status} ${JSON.stringify(s.body)}`);
  const key = s.body.api_key;
  const set = await api('PATCH', '/dashboard/settings', { rate_limit_rps: 100000, rate_limit_burst: 1000000, policy_config: { daily_action_limit: 100000000, anomaly_threshold: 1 } }, key);
  if (set.status !== 200) throw new Error(`settings: ${set.status} ${JSON.stringify(set.body)}`);
  if (SHADOW) {
    // a candidate as a tenant would try one: the same template with a parameter changed, for as long as the run lasts
    const sh = await api('PUT', '/policy/shadow', { policy_config: { anomaly_threshold: 0.9 }, max_calls: 1000000, duration_seconds: 86400 }, key);
    if (sh.status !== 201) throw new Error(`shadow: ${sh.status} ${JSON.stringify(sh.body)}`);
  }
  return key;
}

/**
 * One request at a time over one keep-alive connection, for `seconds` per target, the targets taking turns
 * in slices of one second (gateway, echo, floor, gateway, ...): a machine that changes speed during the
 * runs moves them all alike, as the alternated 32-connection rounds do. Per target: latency percentiles in
 * ms, the median of each Server-Timing step, and { ticks, sys } per process group over its own slices
 * (trackProcesses around each slice).
 */
async function sequential(list, body, seconds, echoPid) {
  const agents = list.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const urls = list.map((t) => new URL(t.url));
  const acc = list.map(() => ({ lat: [], steps: {}, non2xx: 0, ticks: {}, sys: {} }));
  const once = (target, u, agent, a) =>
    new Promise((resolve, reject) => {
      const req = http.request({ agent, host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...target.headers } }, (res) => {
        res.resume();
        // the gateway's own durations per pipeline step (Server-Timing: "policy;dur=1.23, audit;dur=2.01")
        for (const part of String(res.headers['server-timing'] ?? '').split(',')) {
          const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
          if (m) (a.steps[m[1]] ??= []).push(Number(m[2]));
        }
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(body);
    });
  for (let slice = 0; slice < seconds; slice++)
    for (const [i, target] of list.entries()) {
      const a = acc[i];
      const tracked = trackProcesses(echoPid, findProcesses(echoPid));
      const until = performance.now() + 1000;
      while (performance.now() < until) {
        const t0 = performance.now();
        const status = await once(target, urls[i], agents[i], a);
        a.lat.push(performance.now() - t0);
        if (status < 200 || status > 299) a.non2xx++;
      }
      const used = tracked.stop();
      for (const [k, v] of Object.entries(used.ticks)) a.ticks[k] = (a.ticks[k] ?? 0) + v;
      for (const [k, v] of Object.entries(used.sys)) a.sys[k] = (a.sys[k] ?? 0) + v;
    }
  for (const agent of agents) agent.destroy();
  const median = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1];
  return acc.map(({ lat, steps, non2xx, ticks, sys }) => {
    lat.sort((x, y) => x - y);
    const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))];
    return { n: lat.length, non2xx, p50: pct(50), p99: pct(99), steps: Object.entries(steps).map(([k, xs]) => `${k} ${median(xs).toFixed(2)}`).join(', '), used: { ticks, sys } };
  });
}

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');

/**
 * The private fleet's database as autovacuum keeps a production one: its dead rows removed and its
 * statistics fresh. A Postgres may run with autovacuum off (this machine's does: SHOW autovacuum), and the
 * outbox, one row inserted and deleted per call, then piles up dead rows from bench to bench (265,883 after
 * ten runs), which the relay's reads walk: Postgres made 24-41 system calls per governed call instead of 2.
 */
function vacuumFleetDatabase() {
  const t = Date.now();
  const autovacuum = psql(FLEET_DB, 'SHOW autovacuum');
  psql(FLEET_DB, 'VACUUM (ANALYZE)');
  console.log(`  database ${FLEET_DB} vacuumed and analyzed in ${((Date.now() - t) / 1000).toFixed(1)} s (autovacuum of this Postgres: ${autovacuum})`);
}

async function main() {
  console.log(`bench:load  fleet on node ${nodeVersion(FLEET_NODE)}, echo and floors on node ${nodeVersion(ECHO_NODE)}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const speedsBefore = coreSpeeds();
  if (speedsBefore.length) console.log(`  cores, idle: ${speedsBefore.map((u, c) => `cpu${c} ${fmt(u, 2)}`).join(', ')} µs of CPU per reference operation (bench/support/core-speed.cjs)`);
  if (!EXTERNAL) {
    await startFleet();
    vacuumFleetDatabase();
  }
  const echo = await startEcho();
  if (FLOORS.length) await startFloor();
  let groups = findProcesses(echo.pid);
  console.log(`  fleet ${BASE}; processes: ${Object.entries(groups).map(([k, v]) => `${k}(${v.length})`).join(' ')}`);

  const keys = [];
  for (let i = 0; i < TENANTS; i += 20) keys.push(...(await Promise.all(Array.from({ length: Math.min(20, TENANTS - i) }, (_, j) => loadTenant(i + j)))));
  const key = keys[0];
  if (TENANTS > 1) console.log(`  ${TENANTS} tenants; the gateway runs rotate over their API keys`);
  if (SHADOW) console.log('  --shadow: every tenant has a candidate policy in shadow (the general template, anomaly_threshold 0.9)');
  if (RATE) console.log(`  --rate: the governed runs send ${RATE} requests per second in all (the echo runs are unbounded)`);

  const call = JSON.stringify({ agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'benchmark', page: 1 } });
  const targets = {
    echo: { url: `http://127.0.0.1:${ECHO_PORT}/echo`, headers: {} },
    gateway: { url: `${BASE}/mcp/tools/call`, headers: { 'x-api-key': key }, keys },
    floor: { url: `http://127.0.0.1:${FLOOR_PORTS.gateway}/mcp/tools/call`, headers: { 'x-api-key': key } },
    single: { url: `http://127.0.0.1:${FLOOR_PORTS.single}/mcp/tools/call`, headers: { 'x-api-key': key } },
  };
  // warm-up at full concurrency (JIT, pools, caches, the policy's compiled bundle, Postgres' buffers): a
  // cold fleet costs several times a warm one per call (docs/history/performance-2026.md, "The yardstick (round 3)", a new database)
  await run(targets.echo.url, { body: call, connections: CONNECTIONS, duration: Math.max(2, WARM / 3) });
  await run(targets.gateway.url, { body: call, headers: targets.gateway.headers, keys, connections: CONNECTIONS, duration: WARM, rate: RATE });
  // the floor warmed as long as the fleet (JIT, its pool, its table's buffers), so neither starts colder
  for (const f of FLOORS) await run(targets[f].url, { body: call, headers: targets[f].headers, connections: CONNECTIONS, duration: WARM, rate: RATE });

  const probes = await startCoreProbes();
  const results = { echo: [], gateway: [], floor: [], single: [] };
  // per floor: name -> ticks, of them system ticks, system calls, during its runs; the calls answered 2xx
  const floorRuns = Object.fromEntries(FLOORS.map((f) => [f, { cpu: {}, sys: {}, syscalls: {}, calls: 0 }]));
  const cpu = {}; // name -> ticks during gateway runs
  const cpuSys = {}; // name -> of them, system (stime) ticks
  const writes = {}; // name -> write system calls during gateway runs
  const syscalls = {}; // name -> every system call during gateway runs (perf)
  let echoTicks = 0;
  const echoPerCore = []; // { cpu, ticks, requests, usPerOp } of each pinned echo run
  const gwRounds = []; // { fleetTicks, gatewayTicks, calls, usPerOp (the cores' mean while it ran) } of each gateway run
  let echoSysTicks = 0;
  let echoRequests = 0;
  let echoSyscalls = 0;
  const pg0 = { hit: 0, read: 0, xacts: 0, walBytes: 0, walRecords: 0 };
  let redisCalls = 0;
  const storeCalls = {}; // service -> requests sent to each store during gateway runs (agw_store_requests_total)
  let gwCalls = 0;
  let lastEcho = null; // the echo round just before a gateway round: { ticks, requests }
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of ['echo', 'gateway', ...FLOORS]) {
      groups = findProcesses(echo.pid); // pools open postgres backends lazily
      const profiling = CPU_PROF && name === 'gateway' && round === ROUNDS - 1;
      if (profiling) signalServices(groups);
      // the services' own counts, read outside the CPU window (a scrape costs each service a little CPU)
      const storesBefore = name === 'gateway' ? await storeRequestCounts() : null;
      const tracked = trackProcesses(echo.pid, groups);
      const pgBefore = pgStats();
      const redisBefore = redisCommands();
      const measured = {
        echo: (k) => k === 'echo',
        gateway: (k) => k !== 'echo' && !isFloor(k),
        ...floorMember,
      }[name];
      const counting = countSyscalls(Object.fromEntries(Object.entries(groups).filter(([k]) => measured(k))), DURATION);
      if (name === 'gateway') await probes?.report(); // the samples from here on are this run's
      const r = name === 'echo' ? await echoRound(targets.echo, call, echo.pid, DURATION, echoPerCore, probes) : await run(targets[name].url, { body: call, headers: targets[name].headers, keys: targets[name].keys, connections: CONNECTIONS, duration: DURATION, rate: RATE });
      const gwSpeeds = name === 'gateway' ? await probes?.report() : undefined;
      const { ticks: used, sys: usedSys, writes: written } = tracked.stop();
      const pgAfter = pgStats();
      const redisAfter = redisCommands();
      const counted = await counting;
      const storesAfter = name === 'gateway' ? await storeRequestCounts() : null;
      if (profiling) signalServices(groups);
      if (name === 'echo') {
        echoTicks += used.echo ?? 0;
        echoSysTicks += usedSys.echo ?? 0;
        echoRequests += r['2xx'];
        echoSyscalls += counted.echo ?? NaN;
      } else if (floorRuns[name]) {
        const f = floorRuns[name];
        f.calls += r['2xx'];
        for (const [k, v] of Object.entries(used)) if (floorMember[name](k)) f.cpu[k] = (f.cpu[k] ?? 0) + v;
        for (const [k, v] of Object.entries(usedSys)) if (floorMember[name](k)) f.sys[k] = (f.sys[k] ?? 0) + v;
        for (const [k, v] of Object.entries(counted)) f.syscalls[k] = (f.syscalls[k] ?? 0) + v;
      } else {
        for (const [k, v] of Object.entries(counted)) syscalls[k] = (syscalls[k] ?? 0) + v;
        if (pgBefore && pgAfter) for (const k of Object.keys(pg0)) pg0[k] += pgAfter[k] - pgBefore[k];
        redisCalls += redisAfter - redisBefore;
        if (storesBefore && storesAfter)
          for (const [service, c] of Object.entries(storesAfter)) {
            const b = storesBefore[service];
            if (!b) continue;
            const acc = (storeCalls[service] ??= { postgres: 0, redis: 0, nats: 0, natsIn: 0 });
            for (const k of Object.keys(acc)) acc[k] += c[k] - b[k];
          }
      }
      const rps = r.requests.total / r.duration;
      results[name].push({ rps, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors + r.timeouts, total: r.requests.total, ok: r['2xx'] });
      console.log(`  round ${round + 1} ${name.padEnd(7)} ${fmt(rps).padStart(6)} req/s  p50 ${fmt(r.latency.p50, 1)} ms  p99 ${fmt(r.latency.p99, 1)} ms  non-2xx/errors ${r.non2xx + r.errors + r.timeouts}  (load avg ${os.loadavg()[0].toFixed(2)})`);
      const fleetTicks = floorRuns[name] ? floorSum(used, name) : fleetSum(used);
      if (name === 'echo') lastEcho = { ticks: used.echo ?? 0, requests: r['2xx'] };
      else if (lastEcho?.requests && r['2xx']) {
        // each round's own yardstick against the echo round just before it: how far it moves within one run
        const echoMs = msPer(lastEcho.ticks, lastEcho.requests);
        const fleetMs = msPer(fleetTicks, r['2xx']);
        const gw = { floor: used['floor-gateway'], single: used['floor-single'] }[name] ?? used.gateway;
        console.log(`          this round against the echo round before it: ${{ floor: 'the floor', single: 'one process' }[name] ?? 'fleet'} ${fmt(fleetMs / echoMs, 2)} echoes, its gateway ${fmt(msPer(gw ?? 0, r['2xx']) / echoMs, 2)} (echo ${fmt(echoMs, 3)} ms per request)`);
      }
      const gwRound = gwRounds.at(-1);
      if (name === 'floor' && gwRound?.calls && r['2xx']) {
        // the fleet's round just before, in units of this floor round (docs/history/performance-2026.md, "The shape's floor")
        const floors = (ticks, floorTicks) => msPer(ticks, gwRound.calls) / msPer(floorTicks, r['2xx']);
        console.log(`          the gateway round before it in floors: fleet ${fmt(floors(gwRound.fleetTicks, fleetTicks), 2)}, gateway ${fmt(floors(gwRound.gatewayTicks, used['floor-gateway'] ?? 0), 2)}`);
      }
      if (name === 'gateway') {
        gwRounds.push({ fleetTicks, gatewayTicks: used.gateway ?? 0, calls: r['2xx'], usPerOp: gwSpeeds ? mean(gwSpeeds) : NaN });
        gwCalls += r['2xx'];
        for (const k of Object.keys(used)) cpu[k] = (cpu[k] ?? 0) + used[k];
        for (const k of Object.keys(usedSys)) cpuSys[k] = (cpuSys[k] ?? 0) + usedSys[k];
        for (const k of Object.keys(written)) writes[k] = (writes[k] ?? 0) + written[k];
      }
    }
  }
  const e = mean(results.echo.map((x) => x.rps));
  const g = mean(results.gateway.map((x) => x.rps));
  console.log(`\n  ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s each, alternating:`);
  console.log(`    echo     ${fmt(e)} req/s (runs: ${results.echo.map((x) => fmt(x.rps)).join(', ')})  p50 ${fmt(mean(results.echo.map((x) => x.p50)), 1)} ms  p99 ${fmt(mean(results.echo.map((x) => x.p99)), 1)} ms`);
  console.log(`    gateway  ${fmt(g)} req/s (runs: ${results.gateway.map((x) => fmt(x.rps)).join(', ')})  p50 ${fmt(mean(results.gateway.map((x) => x.p50)), 1)} ms  p99 ${fmt(mean(results.gateway.map((x) => x.p99)), 1)} ms  non-2xx/errors ${results.gateway.reduce((s, x) => s + x.non2xx, 0)}`);
  console.log(`    ratio    ${fmt(g / e, 3)}× the echo`);
  console.log(`\n  CPU seconds per 1,000 governed calls (utime+stime over the gateway runs, ${gwCalls} calls answered 2xx), the kernel's part of it (stime), and write system calls per call:`);
  const rows = Object.entries(cpu).filter(([k]) => k !== 'echo' && !isFloor(k)).sort((a, b) => b[1] - a[1]);
  let total = 0;
  let totalWrites = 0;
  let totalSys = 0;
  const pct = (part, whole) => `${fmt(whole ? (100 * part) / whole : NaN).padStart(3)} %`;
  for (const [k, ticks] of rows) {
    const per = msPer(ticks, gwCalls);
    const w = (writes[k] ?? 0) / gwCalls;
    total += per;
    totalSys += msPer(cpuSys[k] ?? 0, gwCalls);
    totalWrites += w;
    console.log(`    ${k.padEnd(17)} ${fmt(per, 3)}   kernel ${pct(cpuSys[k] ?? 0, ticks)}   writes ${fmt(w, 2)}`);
  }
  console.log(`    ${'total'.padEnd(17)} ${fmt(total, 3)}   kernel ${pct(totalSys, total)}   writes ${fmt(totalWrites, 2)}   (2 cores give at most ${fmt(2000 / (total * 1000) * 1000)} calls/s at this cost)`);
  console.log(`    (redis, nats and the postgres server processes are shared with anything else running on this machine)`);

  // the yardstick: CPU per governed call in units of the echo's CPU per request, same machine, same run
  const echoCpuMs = msPer(echoTicks, echoRequests);
  const fleetCpuMs = total; // CPU seconds per 1,000 calls = ms per call
  const gatewayCpuMs = msPer(cpu.gateway ?? 0, gwCalls);
  const sys = Object.entries(syscalls).filter(([k]) => k !== 'echo');
  // a group perf could not count (a Postgres backend that exited as perf started: perf refuses the whole list)
  // is left out of the total, which then says so
  const uncounted = sys.filter(([, v]) => !Number.isFinite(v)).map(([k]) => k);
  const sysTotal = sys.reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0) / gwCalls;
  console.log(`\n  YARDSTICK (this run, this machine):`);
  console.log(`    echo CPU per request                ${fmt(echoCpuMs, 3)} ms (kernel ${pct(echoSysTicks, echoTicks).trim()})${perfWorks ? `   system calls per request ${fmt(echoSyscalls / echoRequests, 1)}` : ''}`);
  // the echo on each core (its rounds run once pinned to each: the unit is the mean core's echo)
  const echoByCore = CPUS.map((c) => echoPerCore.filter((x) => x.cpu === c))
    .filter((xs) => xs.length)
    .map((xs) => ({ cpu: xs[0].cpu, ms: msPer(xs.reduce((a, x) => a + x.ticks, 0), xs.reduce((a, x) => a + x.requests, 0)) }));
  if (echoByCore.length > 1) console.log(`      by core                           ${echoByCore.map((x) => `cpu${x.cpu} ${fmt(x.ms, 3)} ms`).join(', ')} (the echo pinned to each in turn)`);
  // the second unit: reference operations at the speed the cores had while each run ran (the probes), so a
  // machine that slows down between the echo's runs and the fleet's does not move the figure
  const refOps = (parts) => {
    const usable = parts.filter((x) => Number.isFinite(x.usPerOp) && x.n > 0);
    return usable.length === parts.length ? usable.reduce((a, x) => a + (msPer(x.ticks, 1) * 1000) / x.usPerOp, 0) / usable.reduce((a, x) => a + x.n, 0) : NaN;
  };
  const echoRef = refOps(echoPerCore.map((x) => ({ ticks: x.ticks, n: x.requests, usPerOp: x.usPerOp })));
  const fleetRef = refOps(gwRounds.map((x) => ({ ticks: x.fleetTicks, n: x.calls, usPerOp: x.usPerOp })));
  const gatewayRef = refOps(gwRounds.map((x) => ({ ticks: x.gatewayTicks, n: x.calls, usPerOp: x.usPerOp })));
  const inRefs = (ref) => (Number.isFinite(ref) ? `  = ${fmt(ref)} reference operations = ${fmt(ref / echoRef, 2)} echoes at the same core speed` : '');
  // the shape's floor beside the fleet: what every hop and store request of the path costs with no work at any
  const floorRun = floorRuns.floor;
  const floor = floorRun?.calls ? { cpuMs: msPer(floorSum(floorRun.cpu), floorRun.calls), gatewayMs: msPer(floorRun.cpu['floor-gateway'] ?? 0, floorRun.calls), rps: mean(results.floor.map((x) => x.rps)) } : null;
  const singleRun = floorRuns.single;
  const single = singleRun?.calls ? { cpuMs: msPer(floorSum(singleRun.cpu, 'single'), singleRun.calls), rps: mean(results.single.map((x) => x.rps)) } : null;
  console.log(`    fleet CPU per governed call         ${fmt(fleetCpuMs, 3)} ms  = ${fmt(fleetCpuMs / echoCpuMs, 2)} echoes${inRefs(fleetRef)}`);
  console.log(`    gateway process CPU per call        ${fmt(gatewayCpuMs, 3)} ms  = ${fmt(gatewayCpuMs / echoCpuMs, 2)} echoes${inRefs(gatewayRef)}`);
  if (floor) {
    // the unit made of the same work as a governed call (docs/history/performance-2026.md, "The shape's floor")
    console.log(`    fleet CPU per governed call         ${fmt(fleetCpuMs / floor.cpuMs, 2)} floors (the shape's floor: ${fmt(floor.cpuMs, 3)} ms per call, below)`);
    console.log(`    gateway process CPU per call        ${fmt(gatewayCpuMs / floor.gatewayMs, 2)} floors (the floor's gateway: ${fmt(floor.gatewayMs, 3)} ms per call)`);
  }
  if (Number.isFinite(echoRef))
    console.log(`    the cores while the runs ran        ${fmt(mean(echoPerCore.map((x) => x.usPerOp)), 2)} µs per reference operation in the echo's runs (the echo's core), ${gwRounds.map((x) => fmt(x.usPerOp, 2)).join(' and ')} in the gateway's (the cores' mean); the echo: ${fmt(echoRef, 1)} reference operations per request`);
  if (perfWorks) {
    console.log(`    system calls per governed call      ${fmt(sysTotal, 1)}${uncounted.length ? ` without ${uncounted.join(', ')} (not counted this run)` : ''} (all kinds, perf raw_syscalls:sys_enter):  ${sys.sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${fmt(v / gwCalls, 1)}`).join(', ')}`);
  } else console.log('    system calls per governed call      perf not available: the write-family counts above (/proc/<pid>/io syscw) only');
  console.log(`    Postgres per governed call          ${fmt(pg0.hit / gwCalls, 1)} buffer hits, ${fmt(pg0.read / gwCalls, 2)} reads, ${fmt(pg0.xacts / gwCalls, 3)} transactions, ${fmt(pg0.walBytes / gwCalls)} WAL bytes (${fmt(pg0.walRecords / gwCalls, 1)} WAL records; WAL is server-wide)`);
  console.log(`    Redis commands per governed call    ${fmt(redisCalls / gwCalls, 2)} (INFO commandstats, server-wide)`);
  printStoreRequests(storeCalls, gwCalls);

  if (floor) {
    const floorSys = Object.entries(floorRun.syscalls);
    console.log(`\n  THE SHAPE'S FLOOR (bench/support/shape-floor.cjs, the fleet's hops, store requests and contract messages with no work at any hop; --no-floor leaves it out; docs/history/performance-2026.md, "The shape's floor"):`);
    console.log(`    floor    ${fmt(floor.rps)} req/s (runs: ${results.floor.map((x) => fmt(x.rps)).join(', ')})  p50 ${fmt(mean(results.floor.map((x) => x.p50)), 1)} ms  non-2xx/errors ${results.floor.reduce((n, x) => n + x.non2xx, 0)}  ratio ${fmt(floor.rps / e, 3)}× the echo (the fleet: ${fmt(g / e, 3)}×)`);
    console.log(`    CPU per call                        ${fmt(floor.cpuMs, 3)} ms = ${fmt(floor.cpuMs / echoCpuMs, 2)} echoes (the fleet: ${fmt(fleetCpuMs / echoCpuMs, 2)}; the fleet is ${fmt(fleetCpuMs / floor.cpuMs, 2)}× its floor)`);
    console.log(`    its gateway's CPU per call          ${fmt(floor.gatewayMs, 3)} ms = ${fmt(floor.gatewayMs / echoCpuMs, 2)} echoes (the gateway: ${fmt(gatewayCpuMs / echoCpuMs, 2)}; ${fmt(gatewayCpuMs / floor.gatewayMs, 2)}× its floor)`);
    console.log(`    by process (ms per call, kernel)    ${Object.entries(floorRun.cpu).sort((a, b) => b[1] - a[1]).map(([k, t]) => `${k} ${fmt(msPer(t, floorRun.calls), 3)} (${pct(floorRun.sys[k] ?? 0, t).trim()})`).join(', ')}`);
    if (perfWorks) console.log(`    system calls per call               ${fmt(floorSys.reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0) / floorRun.calls, 1)}:  ${floorSys.sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${fmt(v / floorRun.calls, 1)}`).join(', ')}`);
  }
  if (single) {
    console.log(`\n  ONE PROCESS (--single: the same work with no policy or audit hop, the floor of a shape the fleet is not):`);
    console.log(`    one process  ${fmt(single.rps)} req/s (runs: ${results.single.map((x) => fmt(x.rps)).join(', ')})  p50 ${fmt(mean(results.single.map((x) => x.p50)), 1)} ms  non-2xx/errors ${results.single.reduce((n, x) => n + x.non2xx, 0)}  ratio ${fmt(single.rps / e, 3)}× the echo${floor ? ` (the shape's floor: ${fmt(floor.rps / e, 3)}×)` : ''}`);
    console.log(`    CPU per call                        ${fmt(single.cpuMs, 3)} ms = ${fmt(single.cpuMs / echoCpuMs, 2)} echoes${floor ? ` (the shape's floor: ${fmt(floor.cpuMs / echoCpuMs, 2)})` : ''}`);
    console.log(`    by process (ms per call, kernel)    ${Object.entries(singleRun.cpu).sort((a, b) => b[1] - a[1]).map(([k, t]) => `${k} ${fmt(msPer(t, singleRun.calls), 3)} (${pct(singleRun.sys[k] ?? 0, t).trim()})`).join(', ')}`);
  }

  // concurrency 1 (own loop: autocannon's histogram keeps whole milliseconds)
  // and what each call costs there: a fleet that serves one call at a time (most deployments, most of the
  // day) pays every hop's wake-up per call, where 32 connections share them (docs/history/performance-2026.md, "Eleventh session")
  const [c1g, c1e, ...c1floors] = await sequential([targets.gateway, targets.echo, ...FLOORS.map((f) => targets[f])], call, C1_DURATION, echo.pid);
  const c1f = floor ? c1floors[FLOORS.indexOf('floor')] : null;
  const c1s = single ? c1floors[FLOORS.indexOf('single')] : null;
  const [c1gUsed, c1eUsed] = [c1g.used, c1e.used];
  console.log(`\n  concurrency 1, ${C1_DURATION} s each in 1 s turns: gateway p50 ${fmt(c1g.p50, 2)} ms  p99 ${fmt(c1g.p99, 2)} ms  (${c1g.n} calls, non-2xx ${c1g.non2xx});  echo p50 ${fmt(c1e.p50, 2)} ms  p99 ${fmt(c1e.p99, 2)} ms`);
  if (c1g.steps) console.log(`  concurrency 1, the gateway's pipeline steps (Server-Timing), median ms: ${c1g.steps}`);
  const c1Fleet = Object.entries(c1gUsed.ticks).filter(([k]) => k !== 'echo');
  const c1FleetMs = msPer(fleetSum(c1gUsed.ticks), c1g.n);
  const c1EchoMs = msPer(c1eUsed.ticks.echo ?? 0, c1e.n);
  const c1GatewayMs = msPer(c1gUsed.ticks.gateway ?? 0, c1g.n);
  console.log(`  concurrency 1, CPU per call: fleet ${fmt(c1FleetMs, 3)} ms = ${fmt(c1FleetMs / c1EchoMs, 2)} echoes at concurrency 1 (${fmt(c1FleetMs / fleetCpuMs, 2)}× its CPU per call at ${CONNECTIONS} connections; kernel ${pct(fleetSum(c1gUsed.sys), fleetSum(c1gUsed.ticks)).trim()}), gateway ${fmt(c1GatewayMs, 3)} ms = ${fmt(c1GatewayMs / c1EchoMs, 2)}; echo ${fmt(c1EchoMs, 3)} ms per request (${fmt(c1EchoMs / echoCpuMs, 2)}× at ${CONNECTIONS}; kernel ${pct(c1eUsed.sys.echo ?? 0, c1eUsed.ticks.echo ?? 0).trim()})`);
  console.log(`    by process (ms per call): ${c1Fleet.filter(([k]) => !isFloor(k)).sort((a, b) => b[1] - a[1]).filter(([, v]) => msPer(v, c1g.n) >= 0.0005).map(([k, v]) => `${k} ${fmt(msPer(v, c1g.n), 3)}`).join(', ')}`);
  if (c1f) {
    const used = c1f.used.ticks;
    c1f.cpuMs = msPer(floorSum(used), c1f.n);
    console.log(`  concurrency 1, the shape's floor: p50 ${fmt(c1f.p50, 2)} ms  p99 ${fmt(c1f.p99, 2)} ms  (${c1f.n} calls, non-2xx ${c1f.non2xx}; the fleet ${fmt(c1g.p50, 2)} ms, ${fmt(c1g.p50 / c1f.p50, 2)}× its floor), CPU per call ${fmt(c1f.cpuMs, 3)} ms (the fleet ${fmt(c1FleetMs, 3)})`);
    console.log(`    its hops (Server-Timing), median ms: ${c1f.steps}`);
    console.log(`    by process (ms per call): ${Object.entries(used).filter(([k]) => floorMember.floor(k)).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${fmt(msPer(v, c1f.n), 3)}`).join(', ')}`);
  }
  if (c1s) {
    c1s.cpuMs = msPer(floorSum(c1s.used.ticks, 'single'), c1s.n);
    console.log(`  concurrency 1, one process: p50 ${fmt(c1s.p50, 2)} ms  p99 ${fmt(c1s.p99, 2)} ms  (${c1s.n} calls, non-2xx ${c1s.non2xx}), CPU per call ${fmt(c1s.cpuMs, 3)} ms`);
  }

  // every tenant's chain (at most 100 of them, spread over the list)
  const checked = keys.filter((_, i) => i % Math.max(1, Math.floor(keys.length / 100)) === 0);
  const vs = await Promise.all(checked.map((k) => api('GET', '/audit/verify', null, k)));
  const chainsValid = vs.every((v) => v.body.valid);
  console.log(`  audit chains after the run (${checked.length} of ${keys.length} tenants): valid=${chainsValid} records=${vs.reduce((n, v) => n + v.body.record_count, 0)}`);
  probes?.stop();
  const speedsAfter = coreSpeeds();
  if (speedsAfter.length) console.log(`  cores, idle, after the run: ${speedsAfter.map((u, c) => `cpu${c} ${fmt(u, 2)}`).join(', ')} µs per reference operation`);
  if (JSON_OUT) {
    /** a floor's figures under `prefix`_ (none when it did not run) */
    const floorFigures = (prefix, f, c1) =>
      f && {
        [`${prefix}_rps`]: f.rps,
        [`${prefix}_ratio`]: f.rps / e,
        [`${prefix}_ms_per_call`]: f.cpuMs,
        [`${prefix}_echoes`]: f.cpuMs / echoCpuMs,
        [`${prefix}_c1_p50_ms`]: c1?.p50,
        [`${prefix}_c1_ms_per_call`]: c1?.cpuMs,
      };
    const yardstick = {
      checkout: ROOT,
      echo_ms_per_request: echoCpuMs,
      echo_ms_per_request_by_core: echoByCore.map((x) => x.ms),
      core_us_per_reference_op: speedsBefore,
      core_us_per_reference_op_after: speedsAfter,
      // the cores' speed sampled while the runs ran: the echo's runs (each on its core), the gateway's (the mean)
      core_us_per_reference_op_echo_runs: echoPerCore.map((x) => x.usPerOp),
      core_us_per_reference_op_gateway_runs: gwRounds.map((x) => x.usPerOp),
      echo_reference_ops: echoRef,
      fleet_reference_ops: fleetRef,
      gateway_reference_ops: gatewayRef,
      fleet_echoes_same_speed: fleetRef / echoRef,
      gateway_echoes_same_speed: gatewayRef / echoRef,
      echo_rps: e,
      fleet_ms_per_call: fleetCpuMs,
      fleet_echoes: fleetCpuMs / echoCpuMs,
      gateway_ms_per_call: gatewayCpuMs,
      gateway_echoes: gatewayCpuMs / echoCpuMs,
      // null without perf; `syscalls_uncounted` names a group perf could not count (left out of the total)
      syscalls_per_call: perfWorks ? sysTotal : null,
      syscalls_uncounted: uncounted,
      ms_per_call_by_process: Object.fromEntries(rows.map(([k, ticks]) => [k, msPer(ticks, gwCalls)])),
      gateway_rps: g,
      ratio: g / e,
      postgres_buffer_hits_per_call: pg0.hit / gwCalls,
      c1_p50_ms: c1g.p50,
      c1_fleet_ms_per_call: c1FleetMs,
      c1_gateway_ms_per_call: c1GatewayMs,
      c1_echo_ms_per_request: c1EchoMs,
      chains_valid: chainsValid,
      // the floors of the same run (pairs.bench.mjs reads floor_*): the shape with no work at any hop, and
      // with --single the same work in one process
      ...floorFigures('floor', floor, c1f),
      ...(floor && { floor_gateway_ms_per_call: floor.gatewayMs, floor_gateway_echoes: floor.gatewayMs / echoCpuMs }),
      ...floorFigures('single', single, c1s),
    };
    fs.writeFileSync(JSON_OUT, `${JSON.stringify(yardstick, null, 2)}\n`);
  }
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(async () => {
    stopAll();
    // give the fleet time to stop its services (and write --cpu-prof profiles)
    await new Promise((r) => setTimeout(r, 1500));
  });
