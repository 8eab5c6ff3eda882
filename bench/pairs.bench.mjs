#!/usr/bin/env node
// Before and after on this machine, in one command: bench/load.bench.mjs run on another built checkout
// (--before DIR, e.g. a `git worktree` of an earlier commit) and on this one, back to back, N pairs, the
// order alternated (pair 1 before first, pair 2 after first, ...) so a machine that drifts during the run
// does not always favour the same side. Prints each pair's yardstick and change, then the range of the
// changes over the pairs.
//
//   npm run bench:pairs -- --before DIR [--before-node PATH] [--pairs 3] [--logs DIR] [any bench:load option: --rounds 2 --duration 8 --c1 3 ...]
//
// --before-node PATH: the before side's fleet runs on that Node.js binary (bench:load's --node), e.g. the
// runtime the project used before; pass --echo-node PATH too so both sides' echoes run on the same one.
//
// Each run's full output is kept in --logs (default: a new directory under the system's temp directory).
// Why pairs: one build's figures move by ±16 % over an hour on a busy 2-core machine, more than most changes
// (docs/history/performance-2026.md, "Issue 26, session by session"); two runs back to back share the machine's state.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const own = new Set(['before', 'before-node', 'pairs', 'logs', 'report']);
const opt = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return i >= 0 ? args[i + 1] : d;
};
const BEFORE = opt('before', '');
const BEFORE_NODE = opt('before-node', '');
/** --report DIR: print the table of an earlier run from the yardsticks it left in its --logs DIR */
const REPORT = opt('report', '');
if (!BEFORE && !REPORT) {
  console.error('usage: node bench/pairs.bench.mjs --before DIR [--pairs 3] [--logs DIR] [bench:load options]  |  --report LOGS_DIR');
  process.exit(2);
}
const PAIRS = Number(opt('pairs', '3'));
const LOGS = REPORT || opt('logs', '') || fs.mkdtempSync(path.join(os.tmpdir(), 'agw-pairs-'));
fs.mkdirSync(LOGS, { recursive: true });
/** the options passed through to bench/load.bench.mjs (everything but this script's own) */
const passThrough = args.filter((a, i) => !(a.startsWith('--') && own.has(a.slice(2))) && !(i > 0 && args[i - 1].startsWith('--') && own.has(args[i - 1].slice(2))));

/** the checkout's commit, `+changes` when its work tree differs from it (the bench runs what is built) */
const revOf = (dir) => {
  try {
    const rev = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    return execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() ? `${rev}+changes` : rev;
  } catch {
    return '?';
  }
};

/** one bench:load run; resolves to its yardstick (the --json file) */
function run(side, pair) {
  const log = path.join(LOGS, `pair${pair}-${side}.log`);
  const json = path.join(LOGS, `pair${pair}-${side}.json`);
  const argv = [path.join(HERE, 'bench/load.bench.mjs'), ...(side === 'before' ? ['--checkout', BEFORE, ...(BEFORE_NODE ? ['--node', BEFORE_NODE] : [])] : []), ...passThrough, '--json', json];
  process.stdout.write(`  pair ${pair}, ${side.padEnd(6)} ... `);
  const out = fs.openSync(log, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: HERE, stdio: ['ignore', out, out] });
    child.on('error', reject);
    child.on('exit', (code) => {
      fs.closeSync(out);
      if (code !== 0 || !fs.existsSync(json)) return reject(new Error(`bench:load (${side}, pair ${pair}) exited ${code}: see ${log}`));
      const y = JSON.parse(fs.readFileSync(json, 'utf8'));
      console.log(`fleet ${y.fleet_echoes.toFixed(2)} echoes, gateway ${y.gateway_echoes.toFixed(2)}, echo ${y.echo_ms_per_request.toFixed(3)} ms per request`);
      resolve(y);
    });
  });
}

const pct = (b, a) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(0)} %`;
const num = (x, d) => (x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(d));
const FIGURES = [
  ['fleet CPU / call (echoes)', (y) => y.fleet_echoes, 2],
  // the same, the echo's CPU and the fleet's each taken at the speed the cores had while it ran
  ['fleet, echoes at one speed', (y) => y.fleet_echoes_same_speed, 2],
  ['gateway CPU / call (echoes)', (y) => y.gateway_echoes, 2],
  ['gateway, echoes at one speed', (y) => y.gateway_echoes_same_speed, 2],
  // a run where perf could not count a group (a Postgres backend that exited as perf started) prints its
  // total without that group, marked *, and is left out of the range
  ['system calls / call', (y) => y.syscalls_per_call, 1, (y) => y.syscalls_uncounted?.length > 0],
  ['ratio to the echo', (y) => y.ratio, 3],
  ['c1 p50 (ms)', (y) => y.c1_p50_ms, 2],
  // what a call costs a fleet that serves one at a time (every hop's wake-up paid per call)
  ['c1 fleet CPU / call (ms)', (y) => y.c1_fleet_ms_per_call, 3],
  // the fleet in units of the shape's floor measured in the same run (bench/support/shape-floor.cjs)
  ['fleet CPU / call (floors)', (y) => (y.floor_ms_per_call ? y.fleet_ms_per_call / y.floor_ms_per_call : null), 2],
  ['gateway CPU / call (floors)', (y) => (y.floor_gateway_ms_per_call ? y.gateway_ms_per_call / y.floor_gateway_ms_per_call : null), 2],
  ['c1 p50 (floors)', (y) => (y.floor_c1_p50_ms ? y.c1_p50_ms / y.floor_c1_p50_ms : null), 2],
  ['echo CPU / request (ms)', (y) => y.echo_ms_per_request, 3],
  // the second unit: reference operations at the speed the cores had while each run ran (bench/support/core-speed.cjs)
  ['fleet CPU / call (ref. ops)', (y) => y.fleet_reference_ops, 0],
  ['gateway CPU / call (ref. ops)', (y) => y.gateway_reference_ops, 0],
];
/** the ranges are printed for every figure but the echo's own cost (the unit, not a change of the build) */
const UNRANGED = 'echo CPU / request (ms)';

/**
 * How far this machine's cores moved during a pair: bench:load samples each core's speed (CPU µs per
 * reference operation) while each of its measured runs runs; the slowest sample of the pair's gateway runs
 * over the fastest, as a fraction (0.04 = 4 %); null for runs of a bench that did not sample. A virtual
 * machine's cores change speed with its neighbours (docs/history/performance-2026.md, "Tenth session": one core 1.6 times
 * slower than the other for a while); the echoes and reference operations of each run are taken at its own
 * speed, but a pair whose cores moved is still two machines more than two builds. The samples are taken
 * under each run's load, so two builds that load the cores differently move them a little too.
 */
const STEADY = 0.15;
function coresMoved(p) {
  const xs = [p.before, p.after].flatMap((y) => y.core_us_per_reference_op_gateway_runs ?? []).filter(Number.isFinite);
  return xs.length >= 2 ? Math.max(...xs) / Math.min(...xs) - 1 : null;
}

/** pair i's order: odd pairs before first, even pairs after first */
const orderOf = (i) => (i % 2 === 1 ? ['before', 'after'] : ['after', 'before']);

async function measure() {
  console.log(`bench:pairs  before ${path.resolve(BEFORE)} (${revOf(BEFORE)}), after ${HERE} (${revOf(HERE)}); ${PAIRS} pairs; logs in ${LOGS}`);
  const pairs = [];
  for (let i = 1; i <= PAIRS; i++) {
    const got = {};
    for (const side of orderOf(i)) got[side] = await run(side, i);
    pairs.push({ i, first: orderOf(i)[0], ...got });
  }
  return pairs;
}

function readReport() {
  const pairs = [];
  const read = (i, side) => JSON.parse(fs.readFileSync(path.join(LOGS, `pair${i}-${side}.json`), 'utf8'));
  for (let i = 1; fs.existsSync(path.join(LOGS, `pair${i}-before.json`)) && fs.existsSync(path.join(LOGS, `pair${i}-after.json`)); i++) pairs.push({ i, first: orderOf(i)[0], before: read(i, 'before'), after: read(i, 'after') });
  console.log(`bench:pairs  report of ${LOGS}: ${pairs.length} pairs; before ${pairs[0]?.before.checkout ?? '?'}, after ${pairs[0]?.after.checkout ?? '?'}`);
  return pairs;
}

async function main() {
  const pairs = REPORT ? readReport() : await measure();
  if (!pairs.length) throw new Error(`no complete pair in ${LOGS}`);
  const usable = (y, f, partial) => {
    const v = f(y);
    return v !== null && v !== undefined && Number.isFinite(v) && !partial?.(y);
  };
  console.log(`\n  ${'pair (first)'.padEnd(16)}${FIGURES.map(([name]) => name.padEnd(30)).join('')}cores moved`);
  // "cores moved": how far the sampled core speed moved between each pair's gateway runs (coresMoved)
  const moved = pairs.map(coresMoved);
  for (const [i, p] of pairs.entries()) {
    const cells = FIGURES.map(([, f, d, partial]) => {
      const shown = (y) => `${num(f(y), d)}${partial?.(y) ? '*' : ''}`;
      const change = usable(p.before, f, partial) && usable(p.after, f, partial) ? ` (${pct(f(p.before), f(p.after))})` : '';
      return `${shown(p.before)} → ${shown(p.after)}${change}`.padEnd(30);
    });
    console.log(`  ${`${p.i} (${p.first})`.padEnd(16)}${cells.join('')}${moved[i] === null ? '-' : `${(moved[i] * 100).toFixed(0)} %${moved[i] > STEADY ? ' (not steady)' : ''}`}`);
  }
  if (pairs.some((p) => FIGURES.some(([, , , partial]) => partial?.(p.before) || partial?.(p.after)))) console.log('  * without a process group perf could not count in that run (its log says which)');
  const steady = pairs.filter((_, i) => moved[i] !== null && moved[i] <= STEADY);
  const probed = moved.some((m) => m !== null);
  // the steady pairs' range is printed only when there are two or more of them
  console.log(`\n  change over the pairs (after against before, each pair on its own)${probed ? `; pairs whose cores held within ${STEADY * 100} %: ${steady.length} of ${pairs.length}` : ''}:`);
  const range = (ps, f, partial) => {
    const changes = ps.filter((p) => usable(p.before, f, partial) && usable(p.after, f, partial)).map((p) => ((f(p.after) - f(p.before)) / f(p.before)) * 100);
    return changes.length ? `${Math.min(...changes).toFixed(0)} to ${Math.max(...changes).toFixed(0)} %` : '-';
  };
  for (const [name, f, , partial] of FIGURES.filter(([name]) => name !== UNRANGED)) {
    const all = range(pairs, f, partial);
    if (all === '-') continue;
    console.log(`    ${name.padEnd(30)} ${all.padEnd(16)}${steady.length > 1 ? `steady: ${range(steady, f, partial)}` : ''}`);
  }
  const invalid = pairs.flatMap((p) => [p.before, p.after]).filter((y) => !y.chains_valid);
  console.log(`  audit chains valid after every run: ${invalid.length === 0}`);
  if (invalid.length) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e.message ?? e);
  process.exitCode = 1;
});
