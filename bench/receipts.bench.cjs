#!/usr/bin/env node
/**
 * What signing a receipt costs the audit service per governed call (docs/evidence.md, "Receipts"): the
 * built `Receipts.issue` of services/audit with its delegation cached (the steady state: one vault call per
 * tenant and receipt key), i.e. the note's text and one Ed25519 signature with node:crypto. CPU µs per
 * receipt from process.cpuUsage, in rounds.   node bench/receipts.bench.cjs [--n 20000] [--rounds 3]
 */
const path = require('node:path');
const { randomBytes, randomUUID } = require('node:crypto');
const audit = path.join(__dirname, '../services/audit');
const { Receipts } = require(path.join(audit, 'dist/receipts/receipts.js'));
const { createLogger } = require(require.resolve('@agw/shared', { paths: [audit] }));

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const n = arg('n', 20000);
const rounds = arg('rounds', 3);
const signer = { keyName: async (t) => `localhost/agw/${t}`, sign: async (t, text) => ({ note: `${text}\n\u2014 localhost/agw/${t} AAAA\n`, keyName: `localhost/agw/${t}` }) };
const receipts = new Receipts(signer, { mmdSeconds: 7200, keyLifetimeMs: 3600e3, logger: createLogger('bench', 'silent') });
const tenant = randomUUID();
const record = () => ({ tenant_seq: 41, record_hash: randomBytes(32).toString('hex'), decision: 'allow', tool: 'svc_web_search', method: 'search', bundle_revision: 'rev-abc', details: { arguments_sha256: randomBytes(32).toString('hex') } });

(async () => {
  for (let i = 0; i < 2000; i++) await receipts.issue(tenant, record());
  for (let round = 1; round <= rounds; round++) {
    const records = Array.from({ length: n }, record);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (const r of records) await receipts.issue(tenant, r);
    const c = process.cpuUsage(c0);
    console.log(`round ${round}: ${((c.user + c.system) / n).toFixed(1)} µs CPU per receipt, ${(((performance.now() - t0) * 1000) / n).toFixed(1)} µs wall`);
  }
})();
