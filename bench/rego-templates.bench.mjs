#!/usr/bin/env node
// Benchmark of @agw/rego on the policy templates: microseconds per decision and ratio to a
// hand-written JS function of the same rules. Run after building the package:
//   pnpm --filter @agw/rego build && node bench/rego-templates.bench.mjs [--iterations N]
// Uses services/policy/templates/<name>.rego when present, else the representative policies in
// bench/rego-templates/. Figures are printed, never asserted.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { handwritten, scenarios } from './rego-templates/handwritten.mjs';
import { factories } from './rego-templates/handwritten-services.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const require = createRequire(import.meta.url);
const { compile } = require(path.join(repo, 'packages/rego/dist/index.js'));

const argIdx = process.argv.indexOf('--iterations');
const N = argIdx > 0 ? Number(process.argv[argIdx + 1]) : 20000;
const nowNs = BigInt(Date.UTC(2026, 0, 7, 10, 30)) * 1000000n; // a Wednesday, 10:30 UTC
const nowMs = Number(nowNs / 1000000n);

// CPU time of this process (user + system), less sensitive than wall time to other load on the machine
function cpuUs() { const u = process.cpuUsage(); return u.user + u.system; }
function time(fn, n) {
  for (let i = 0; i < Math.min(2000, n); i++) fn(); // warm-up
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const t0 = cpuUs();
    for (let i = 0; i < n; i++) fn();
    const us = (cpuUs() - t0) / n;
    if (us < best) best = us;
  }
  return best;
}

const rows = [];
for (const name of Object.keys(scenarios)) {
  const real = path.join(repo, 'services/policy/templates', `${name}.rego`);
  const file = fs.existsSync(real) ? real : path.join(here, 'rego-templates', `${name}.rego`);
  const source = fs.readFileSync(file, 'utf8');
  const policy = compile([{ name: path.relative(repo, file), source }]);
  const pkg = policy.packages[0];
  const { input, config } = scenarios[name];
  const data = { config };
  const opts = { input, data, nowNs };
  const rego = () => policy.evaluate(`data.${pkg}.decision`, opts);
  // baseline: hand-written JS of the same rules (services templates: factories in handwritten-services.mjs)
  const jsFn = file === real ? factories[name](config) : (i, n) => handwritten[name](i, config, n);
  const js = () => jsFn(input, nowMs);
  const regoOut = rego();
  const jsOut = js();
  const same = isDeepStrictEqual(regoOut, jsOut);
  const usRego = time(rego, N);
  const usJs = time(js, N * 10);
  rows.push({ template: name, source: path.relative(repo, file), 'rego µs/decision': usRego.toFixed(2), 'js µs/decision': usJs.toFixed(3), ratio: (usRego / usJs).toFixed(1), 'same result': same ? 'yes' : 'NO' });
  if (!same) console.error(`${name}: results differ\n  rego: ${JSON.stringify(regoOut)}\n  js:   ${JSON.stringify(jsOut)}`);
}
console.log(`node ${process.version}, ${N} decisions per round (JS: ${N * 10}), best of 5 rounds, CPU time per decision`);
console.table(rows);
