#!/usr/bin/env node
// Bytes allocated per Merkle proof (MerkleProofs.inclusion and .consistency, the code behind
// GET /api/audit/merkle/proof/{record_hash} and /api/audit/merkle/consistency/{n}/{m}), on the 1,000,000-leaf
// tree `npm run bench:chain` leaves in database agw_chain_bench (run that first).
//
//   node bench/proof-alloc.bench.mjs [--proofs 1000]
//
// The garbage collections of the proving process are what is left of the proof tail (docs/history/performance-2026.md,
// "Proofs, round 3"), and they come in proportion to what a proof allocates. Node has no counter of
// allocated bytes, so this measures the heap's growth over the proofs in a process whose young generation
// is large enough that no collection runs meanwhile (it starts itself again with the V8 flags for that).
// Warm: JIT, pool and the upper-node cache are used first. Figures are printed, never asserted.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FLAGS = ['--min-semi-space-size=128', '--max-semi-space-size=128', '--expose-gc'];
if (typeof global.gc !== 'function') {
  const r = spawnSync(process.execPath, [...FLAGS, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(ROOT, 'services/audit/package.json'));
const shared = require('@agw/shared');
const { sql } = require('kysely');
const { MerkleRepository } = require(path.join(ROOT, 'services/audit/dist/merkle/merkle.repository.js'));
const { MerkleProofs } = require(path.join(ROOT, 'services/audit/dist/merkle/merkle-proofs.js'));
const { UpperNodeCache } = require(path.join(ROOT, 'services/audit/dist/merkle/upper-node-cache.js'));

const args = process.argv.slice(2);
const i = args.indexOf('--proofs');
const PROOFS = Number(i >= 0 ? args[i + 1] : '1000');
const TENANT = '00000000-0000-4000-8000-000001000000'; // the tenant of bench:chain's verify and proofs

const db = shared.createDb(`postgres://postgres@127.0.0.1:5432/agw_chain_bench`);
try {
  const { rows: heads } = await sql`SELECT tree_index, tree_size FROM merkle_tree_heads WHERE tenant_id = ${TENANT} ORDER BY tree_index`.execute(db);
  if (heads.length < 2) throw new Error('no tree heads of the bench tenant: run `npm run bench:chain -- --skip appends` first');
  const size = Number(heads[heads.length - 1].tree_size);
  const leaves = Array.from({ length: 2 * PROOFS }, () => Math.floor(Math.random() * size));
  const { rows } = await sql`SELECT record_hash FROM audit_records WHERE tenant_id = ${TENANT} AND tenant_seq = ANY(${leaves}::bigint[])`.execute(db);
  const hashes = rows.map((r) => r.record_hash);
  const proofs = new MerkleProofs(new MerkleRepository(db), new UpperNodeCache());
  const pairs = Array.from({ length: 2 * PROOFS }, () => {
    const a = Math.floor(Math.random() * heads.length);
    const b = (a + 1 + Math.floor(Math.random() * (heads.length - 1))) % heads.length;
    return [Number(heads[Math.min(a, b)].tree_index), Number(heads[Math.max(a, b)].tree_index)];
  });
  /** KB allocated per call of f over n calls, after the same number of warm-up calls */
  const perCall = async (n, f) => {
    for (let k = 0; k < n; k++) await f(k);
    global.gc();
    const before = process.memoryUsage().heapUsed;
    for (let k = 0; k < n; k++) await f(n + k);
    return (process.memoryUsage().heapUsed - before) / n / 1024;
  };
  const n = Math.min(PROOFS, Math.floor(hashes.length / 2));
  const inclusion = await perCall(n, (k) => proofs.inclusion(TENANT, hashes[k]));
  const consistency = await perCall(PROOFS, (k) => proofs.consistency(TENANT, pairs[k][0], pairs[k][1]));
  console.log(`proof allocations (${n} inclusion, ${PROOFS} consistency proofs of a ${size}-leaf tree, after as many warm-up proofs):`);
  console.log(`  inclusion   ${inclusion.toFixed(1)} KB per proof`);
  console.log(`  consistency ${consistency.toFixed(1)} KB per proof`);
} finally {
  await db.destroy();
}
