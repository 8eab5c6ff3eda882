#!/usr/bin/env node
// The audit chain and its Merkle proofs at scale, on this machine, against the real local Postgres.
//
//   npm run bench:chain -- [--duration 10] [--concurrency 64] [--tenants 1,10,100,1000] [--records 1000000]
//                          [--threads <cores>] [--proofs 1000] [--heads 16] [--refill] [--skip appends,verify,proofs]
//
// Runs what is built (`npm run build` first): the audit service's own modules from services/audit/dist,
// in this process, against its own database `agw_chain_bench` (created and migrated here; never a
// developer's data). Prints the machine's load average beside every figure. Figures are printed, never
// asserted; the chain and every proof are checked.
//
// 1. appends/s: N concurrent appenders (64) call AuditChain.append, the audit service's append path
//    (group commit -> one `audit_append_batch` statement per batch -> COMMIT); each appender sends its
//    next record only after the previous one's answer, and an answer comes only after its batch has
//    committed. Each append carries what a governed call's append carries: the record, the policy's
//    replay input and the decision event for the outbox, all in the record's transaction. Once per entry
//    of `--tenants`: the appends go to that many tenants in turn (all active). Prints appends/s, latency,
//    and CPU µs per append of this process and of the bench database's Postgres backends (/proc). The
//    chains are verified afterwards.
// 2. verify: a tenant's chain of `--records` records, filled quickly (below), then AuditChain.verify,
//    the code behind GET /api/audit/verify, timed, with `--threads` ranges at a time as the audit service
//    runs it (AUDIT_VERIFY_THREADS, default one per core). The fill: records computed here with the project's
//    own hashing (record-hash.ts: RFC 8785 canonical JSON || prev_hash, SHA-256), written by a bulk
//    INSERT ... SELECT FROM jsonb_to_recordset in chunks, the head row set to the last hash; then the
//    last 1,000 records are appended through AuditChain.append (the SQL function continues the chain
//    from the bulk-written head), so the verify checks that both writers agree. The chain is kept in the
//    bench database: a later run with the same --records reuses it (--refill writes it again).
// 3. proofs: tree heads over that chain built the hourly job's way (TreeBuilder.buildPending, the code
//    of the schedule and of POST /api/anchor/trigger), in `--heads` builds so there are heads of many
//    sizes; then `--proofs` random inclusion proofs (MerkleProofs.inclusion: by record_hash, against the
//    latest head, as GET /api/audit/merkle/proof/{record_hash}) and as many random consistency proofs
//    between two heads (MerkleProofs.consistency, as GET /api/audit/merkle/consistency/{n}/{m}), timed one
//    at a time (median, p99), each checked with the independent RFC 9162 verifier of @agw/verifier.
//    Three passes of new random proofs: every node read from the table, then with the audit service's
//    cache of the upper levels (upper-node-cache.ts) while it fills, then with it warm.
//    Each line also counts the proofs slower than 5 ms and how many of them overlapped a garbage-collection
//    pause of this process (the tail's two causes: cold reads, and the young generation's scavenges).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(ROOT, 'services/audit/package.json'));
const shared = require('@agw/shared');
const { sql } = require('kysely');
const { AuditChain } = require(path.join(ROOT, 'services/audit/dist/chain/audit-chain.js'));
const { AuditRecordRepository } = require(path.join(ROOT, 'services/audit/dist/chain/audit-record.repository.js'));
const { canonicalContent, recordHash, GENESIS } = require(path.join(ROOT, 'services/audit/dist/chain/record-hash.js'));
const { MerkleRepository } = require(path.join(ROOT, 'services/audit/dist/merkle/merkle.repository.js'));
const { TreeBuilder } = require(path.join(ROOT, 'services/audit/dist/merkle/tree-builder.js'));
const { MerkleProofs } = require(path.join(ROOT, 'services/audit/dist/merkle/merkle-proofs.js'));
const { UpperNodeCache, DEFAULT_UPPER_NODE_CACHE } = require(path.join(ROOT, 'services/audit/dist/merkle/upper-node-cache.js'));
const verifier = require(path.join(ROOT, 'packages/verifier/dist/rfc9162.js'));

const args = process.argv.slice(2);
const opt = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return i >= 0 ? args[i + 1] : d;
};
const DURATION = Number(opt('duration', '10'));
const CONCURRENCY = Number(opt('concurrency', '64'));
const TENANTS = String(opt('tenants', '1,10,100,1000')).split(',').map(Number);
const RECORDS = Number(opt('records', '1000000'));
const PROOFS = Number(opt('proofs', '1000'));
const HEADS = Number(opt('heads', '16'));
const REFILL = args.includes('--refill');
const THREADS = Number(opt('threads', String(os.availableParallelism()))); // as the audit service's AUDIT_VERIFY_THREADS=0
const SKIP = new Set(String(opt('skip', '')).split(',').filter(Boolean));
const DB_URL = process.env.CHAIN_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_chain_bench';
const TAIL = 1000; // records of the big chain appended through the service's append path

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const log = (s) => console.log(s);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const ms = (x) => x.toFixed(3);

// ---------- records ----------
const tools = ['svc_web_search', 'svc_crm_lookup', 'svc_email_send', 'svc_file_read', 'svc_payments_refund'];
let seq = 0;
/** A governed call's record, varied enough that canonical JSON has work to do (nesting, escapes, non-ASCII). */
function entry(i = seq++) {
  const deny = i % 7 === 0;
  return {
    action_id: randomUUID(),
    agent_id: `agent-${i % 50}`,
    agent_type: 'assistant',
    agent_version: '1.4.2',
    tool: tools[i % tools.length],
    method: 'call',
    params: { q: `quarterly report ${i} for "ACME" – Zürich`, limit: (i % 20) + 1, filters: { region: 'eu', tags: ['finance', 'q3'] } },
    decision: deny ? 'deny' : 'allow',
    violations: deny ? ['DATA_EXFILTRATION'] : [],
    severity: deny ? 'high' : 'none',
    alert_tier: deny ? 'P2' : null,
    requires_human: false,
    execution_mode: 'agent_direct',
    source: 'mcp_governed',
    session_id: i % 3 === 0 ? `sess-${i % 1000}` : null,
    bundle_revision: 'rev-7f3a9c',
    details: { stage: 'policy', passes: 2 },
    requested_at: new Date(Date.UTC(2026, 10, 1) + i * 37).toISOString(),
  };
}
const replayOf = (e) => ({
  action_id: e.action_id,
  agent_id: e.agent_id,
  agent_type: e.agent_type,
  agent_version: e.agent_version,
  tool: e.tool,
  method: e.method,
  session_id: e.session_id,
  stored_params: e.params,
  pii_detected: false,
  behavioral: { action_count_1h: 1 },
  decision: e.decision,
  violations: e.violations,
  severity: e.severity,
  bundle_revision: e.bundle_revision,
  passes: 2,
  evaluated_at: new Date().toISOString(),
});

// ---------- CPU of this process and of the bench database's Postgres backends (/proc, USER_HZ = 100) ----------
const CLK_TCK = 100;
function procCpuMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return 0; // the backend has gone
  }
}
async function backendPids(db) {
  const { rows } = await sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`.execute(db);
  return rows.map((r) => r.pid);
}

// ---------- 1. appends/s ----------
async function appends(db, chain, tenants) {
  let done = 0;
  let next = 0;
  // warm-up on a throwaway tenant (JIT, the pool's connections opened), not counted
  const warm = randomUUID();
  for (let k = 0; k < 5; k++) await Promise.all(Array.from({ length: CONCURRENCY }, () => chain.append(warm, entry(), { eventKind: 'allowed', replay: replayOf(entry()) })));
  const pids = await backendPids(db);
  const pg0 = pids.map(procCpuMs);
  const me0 = process.cpuUsage();
  const lat = [];
  const stopAt = performance.now() + DURATION * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      while (performance.now() < stopAt) {
        const tenant = tenants[next++ % tenants.length]; // every tenant active, in turn
        const e = entry();
        const s = performance.now();
        await chain.append(tenant, e, { eventKind: e.decision === 'deny' ? 'denied' : 'allowed', replay: replayOf(e) });
        lat.push(performance.now() - s);
        done++;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const me = process.cpuUsage(me0);
  const cpu = { node: (me.user + me.system) / done, pg: (pids.map(procCpuMs).reduce((a, x) => a + x, 0) - pg0.reduce((a, x) => a + x, 0)) * 1000 / done };
  lat.sort((a, b) => a - b);
  const checks = [];
  for (const t of tenants) checks.push(await chain.verify(t));
  const valid = checks.every((c) => c.valid);
  const records = checks.reduce((a, c) => a + c.record_count, 0);
  // the bench has no event relay: drop the decision events its appends left in the outbox, and the
  // throwaway tenants' rows (the bench database keeps only the big chain between runs)
  await sql`DELETE FROM event_outbox WHERE subject LIKE 'CHAINBENCH.%'`.execute(db);
  const gone = [...tenants, warm];
  await sql`DELETE FROM audit_decision_inputs WHERE tenant_id = ANY(${gone}::uuid[])`.execute(db);
  await sql`DELETE FROM audit_records WHERE tenant_id = ANY(${gone}::uuid[])`.execute(db);
  await sql`DELETE FROM audit_chain_heads WHERE tenant_id = ANY(${gone}::uuid[])`.execute(db);
  return { rate: done / secs, done, secs, p50: pct(lat, 50), p99: pct(lat, 99), valid, records, cpu };
}

// ---------- 2. fill + verify ----------
const bigTenant = (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function fill(db, chain, tenant, n) {
  const head = await db.selectFrom('audit_chain_heads').select(['record_count']).where('tenant_id', '=', tenant).executeTakeFirst();
  if (!REFILL && head && Number(head.record_count) === n) return { reused: true };
  const t0 = performance.now();
  await db.deleteFrom('merkle_nodes').where('tenant_id', '=', tenant).execute();
  await db.deleteFrom('merkle_tree_heads').where('tenant_id', '=', tenant).execute();
  await db.deleteFrom('audit_records').where('tenant_id', '=', tenant).execute();
  await db.deleteFrom('audit_chain_heads').where('tenant_id', '=', tenant).execute();
  const bulk = n - TAIL;
  let prev = GENESIS;
  const CHUNK = 10_000;
  for (let start = 0; start < bulk; start += CHUNK) {
    const rows = [];
    for (let i = start; i < Math.min(bulk, start + CHUNK); i++) {
      const e = entry(i);
      const h = recordHash(e, prev);
      rows.push({ ...e, tenant_seq: i, prev_hash: prev, record_hash: h });
      prev = h;
    }
    await sql`
      INSERT INTO audit_records (tenant_id, tenant_seq, action_id, agent_id, agent_type, agent_version, tool, method, params, decision,
        violations, severity, alert_tier, requires_human, execution_mode, source, session_id, bundle_revision, details, requested_at,
        prev_hash, record_hash)
      SELECT ${tenant}::uuid, x.tenant_seq, x.action_id, x.agent_id, x.agent_type, x.agent_version, x.tool, x.method, x.params, x.decision,
        x.violations, x.severity, x.alert_tier, x.requires_human, x.execution_mode, x.source, x.session_id, x.bundle_revision, x.details,
        x.requested_at, x.prev_hash, x.record_hash
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(tenant_seq bigint, action_id uuid, agent_id text, agent_type text,
        agent_version text, tool text, method text, params jsonb, decision text, violations jsonb, severity text, alert_tier text,
        requires_human boolean, execution_mode text, source text, session_id text, bundle_revision text, details jsonb,
        requested_at timestamptz, prev_hash text, record_hash text)`.execute(db);
    if (start % 200_000 === 0 && start) process.stdout.write(`  filled ${start} records (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  await sql`INSERT INTO audit_chain_heads (tenant_id, last_hash, record_count) VALUES (${tenant}, ${prev}, ${bulk})`.execute(db);
  // the tail through the service's append path: audit_append_batch continues from the bulk-written head
  await Promise.all(Array.from({ length: TAIL }, (_, k) => chain.append(tenant, entry(bulk + k))));
  await sql`ANALYZE audit_records`.execute(db);
  return { reused: false, secs: (performance.now() - t0) / 1000 };
}

// ---------- 3. proofs ----------
async function trees(db, tenant, n) {
  const repo = new MerkleRepository(db);
  const latest = await repo.latestHead(tenant);
  if (latest && latest.tree_size === n && !REFILL) return { reused: true, heads: await repo.listHeads(tenant) };
  await db.deleteFrom('merkle_nodes').where('tenant_id', '=', tenant).execute();
  await db.deleteFrom('merkle_tree_heads').where('tenant_id', '=', tenant).execute();
  const logger = shared.createLogger('chain-bench', 'warn');
  // uneven build sizes so the heads are not powers of two
  const per = Math.ceil(n / HEADS) + 7;
  const builder = new TreeBuilder(db, repo, { treeBuilt: async () => undefined }, logger, { maxLeavesPerBuild: per });
  const t0 = performance.now();
  const times = [];
  for (;;) {
    const s = performance.now();
    const r = await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    if (r.built.length === 0) break;
    times.push(performance.now() - s);
  }
  return { reused: false, secs: (performance.now() - t0) / 1000, perBuild: per, buildMs: times, heads: await repo.listHeads(tenant) };
}

// this process's garbage-collection pauses (start, duration in ms), to tell them apart from slow reads
const gcPauses = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push([e.startTime, e.duration]);
}).observe({ entryTypes: ['gc'] });
const SLOW_MS = 5;
/** proofs slower than SLOW_MS, and how many of them overlap one of this process's GC pauses */
function slowOnes(spans) {
  const slow = spans.filter(([s, d]) => d > SLOW_MS);
  const withGc = slow.filter(([s, d]) => gcPauses.some(([gs, gd]) => gs < s + d && gs + gd > s));
  return `${slow.length} slower than ${SLOW_MS} ms, ${withGc.length} of them during a GC pause of this process`;
}

/** `cache`: the service's upper-node cache, or one that keeps nothing (every node from the table) */
async function proofs(db, tenant, heads, cache) {
  const repo = new MerkleRepository(db);
  const p = new MerkleProofs(repo, cache);
  const latest = heads[heads.length - 1];
  // random leaves of the latest head: their record hashes, read first (not timed)
  const leaves = Array.from({ length: PROOFS }, () => Math.floor(Math.random() * latest.tree_size));
  const { rows } = await sql`SELECT tenant_seq, record_hash FROM audit_records WHERE tenant_id = ${tenant} AND tenant_seq = ANY(${leaves}::bigint[])`.execute(db);
  const hashOf = new Map(rows.map((r) => [Number(r.tenant_seq), r.record_hash]));
  const inc = [];
  const incSpans = [];
  let incOk = 0;
  for (const leaf of leaves) {
    const s = performance.now();
    const r = await p.inclusion(tenant, hashOf.get(leaf));
    inc.push(performance.now() - s);
    incSpans.push([s, inc[inc.length - 1]]);
    const ok =
      r.verified &&
      r.leaf_index === leaf &&
      verifier.verifyInclusion(verifier.leafHash(Buffer.from(r.record_hash, 'hex')), r.leaf_index, r.tree.tree_size, r.proof.map((x) => Buffer.from(x, 'hex')), Buffer.from(r.tree.merkle_root, 'hex'));
    if (ok) incOk++;
  }
  const con = [];
  const conSpans = [];
  let conOk = 0;
  for (let k = 0; k < PROOFS; k++) {
    let a = Math.floor(Math.random() * heads.length);
    let b = Math.floor(Math.random() * heads.length);
    if (a === b) b = (b + 1) % heads.length;
    if (a > b) [a, b] = [b, a];
    const s = performance.now();
    const r = await p.consistency(tenant, heads[a].tree_index, heads[b].tree_index);
    con.push(performance.now() - s);
    conSpans.push([s, con[con.length - 1]]);
    const ok =
      r.verified &&
      verifier.verifyConsistency(r.first.tree_size, r.second.tree_size, Buffer.from(r.first.merkle_root, 'hex'), Buffer.from(r.second.merkle_root, 'hex'), r.proof.map((x) => Buffer.from(x, 'hex')));
    if (ok) conOk++;
  }
  inc.sort((x, y) => x - y);
  con.sort((x, y) => x - y);
  return { inc, con, incOk, conOk, incSlow: slowOnes(incSpans), conSlow: slowOnes(conSpans) };
}

// ---------- main ----------
async function main() {
  log(`chain-scale bench: ${os.cpus().length} cores, node ${process.version}, database ${new URL(DB_URL).pathname.slice(1)}, load average ${load()}`);
  await shared.migrateToLatest(DB_URL);
  const db = shared.createDb(DB_URL, { max: 4 });
  const chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false, streamPrefix: 'CHAINBENCH', verify: { databaseUrl: DB_URL, threads: THREADS } });
  try {
    if (!SKIP.has('appends')) {
      log(`\n1. appends: ${CONCURRENCY} concurrent appenders, ${DURATION} s, each answer after its commit (record + replay input + outbox event per append)`);
      for (const n of TENANTS) {
        const tenants = Array.from({ length: n }, () => randomUUID());
        const r = await appends(db, chain, tenants);
        log(
          `   ${String(n).padStart(4)} tenant${n === 1 ? ' ' : 's'}: ${r.rate.toFixed(0).padStart(6)} appends/s  (${r.done} in ${r.secs.toFixed(1)} s)  latency p50 ${ms(r.p50)} ms  p99 ${ms(r.p99)} ms  CPU µs/append: this process ${r.cpu.node.toFixed(0)}, Postgres backends ${r.cpu.pg.toFixed(0)}  chains valid=${r.valid} records=${r.records}  load ${load()}`,
        );
      }
    }
    const tenant = bigTenant(RECORDS);
    if (!SKIP.has('verify')) {
      log(`\n2. verify of ${RECORDS} records (tenant ${tenant}), ${THREADS} range${THREADS === 1 ? '' : 's'} at a time`);
      const f = await fill(db, chain, tenant, RECORDS);
      log(f.reused ? '   chain reused from an earlier run (--refill to write it again)' : `   filled in ${f.secs.toFixed(1)} s (bulk insert of ${RECORDS - TAIL}, then ${TAIL} through AuditChain.append)  load ${load()}`);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const v = await chain.verify(tenant);
      const secs = (performance.now() - t0) / 1000;
      const c = process.cpuUsage(c0);
      log(
        `   AuditChain.verify: valid=${v.valid} record_count=${v.record_count} in ${secs.toFixed(2)} s = ${(v.record_count / secs).toFixed(0)} records/s, this process's CPU ${((c.user + c.system) / 1e6).toFixed(2)} s  load ${load()}`,
      );
    }
    if (!SKIP.has('proofs')) {
      log(`\n3. proofs from a ${RECORDS}-leaf tree (tenant ${tenant})`);
      const head = await db.selectFrom('audit_chain_heads').select(['record_count']).where('tenant_id', '=', tenant).executeTakeFirst();
      if (!head || Number(head.record_count) !== RECORDS) throw new Error('the chain is missing: run without --skip verify first');
      const t = await trees(db, tenant, RECORDS);
      if (t.reused) log(`   ${t.heads.length} tree heads reused from an earlier run`);
      else log(`   ${t.heads.length} tree heads built by TreeBuilder.buildPending (≤ ${t.perBuild} leaves each) in ${t.secs.toFixed(1)} s, per build ms: ${t.buildMs.map((x) => x.toFixed(0)).join(' ')}  load ${load()}`);
      log(`   sizes: ${t.heads.map((h) => h.tree_size).join(' ')}`);
      // the same random proofs three times: every node from the table (the service before the node cache),
      // then with the service's cache of the upper levels (level >= 8) as it fills, then with it warm
      const cache = new UpperNodeCache(DEFAULT_UPPER_NODE_CACHE);
      const runs = [
        ['every node from the table', new UpperNodeCache({ minLevel: Number.POSITIVE_INFINITY, maxNodes: 0 })],
        [`upper levels (>= ${DEFAULT_UPPER_NODE_CACHE.minLevel}) in memory, cache filling`, cache],
        ['upper levels in memory, second pass', cache],
      ];
      for (const [what, c] of runs) {
        const r = await proofs(db, tenant, t.heads, c);
        log(`   ${what}${c === cache ? ` (${c.size} nodes cached after)` : ''}:`);
        log(`     inclusion   (${r.inc.length}, by record_hash, latest head): median ${ms(pct(r.inc, 50))} ms  p99 ${ms(pct(r.inc, 99))} ms  max ${ms(r.inc[r.inc.length - 1])} ms  verified ${r.incOk}/${r.inc.length}; ${r.incSlow}`);
        log(`     consistency (${r.con.length}, random pairs of heads):      median ${ms(pct(r.con, 50))} ms  p99 ${ms(pct(r.con, 99))} ms  max ${ms(r.con[r.con.length - 1])} ms  verified ${r.conOk}/${r.con.length}; ${r.conSlow}  load ${load()}`);
      }
    }
  } finally {
    await db.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
