#!/usr/bin/env node
// agw-policy test <dir|file.rego>... [-v] [--coverage] [--data file.json]: runs the `test_*` rules of every .rego file
// found (recursively) like `opa test`, without a fleet. Exit 0 when every test passes, 1 when one fails or
// errors (or none is found), 2 on a usage or compile error.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { formatResults, runTests } from '../dist/index.js';

const args = process.argv.slice(2);
const usage = 'usage: agw-policy test <dir|file.rego>... [-v|--verbose] [--coverage] [--data <file.json>]\n';
if (args[0] !== 'test') { process.stderr.write(usage); process.exit(2); }
let verbose = false; let coverage = false; let data; const paths = [];
for (let i = 1; i < args.length; i++) {
  const a = args[i];
  if (a === '-v' || a === '--verbose') verbose = true;
  else if (a === '--coverage') coverage = true;
  else if (a === '--data') { const f = args[++i]; if (!f) { process.stderr.write(usage); process.exit(2); } data = JSON.parse(readFileSync(f, 'utf8')); }
  else if (a.startsWith('-')) { process.stderr.write(`unknown option ${a}\n${usage}`); process.exit(2); }
  else paths.push(a);
}
if (!paths.length) { process.stderr.write(usage); process.exit(2); }
const files = [];
const walk = (p) => {
  let st;
  try { st = statSync(p); } catch { process.stderr.write(`${p}: no such file or directory\n`); process.exit(2); }
  if (st.isDirectory()) { for (const e of readdirSync(p).sort()) if (!e.startsWith('.')) walk(join(p, e)); }
  else if (p.endsWith('.rego')) files.push(p);
};
paths.forEach(walk);
const modules = files.map((f) => ({ name: relative(process.cwd(), f) || f, source: readFileSync(f, 'utf8') }));
const run = runTests(modules, { data });
process.stdout.write(formatResults(run, verbose, coverage));
if (run.compileError) process.exit(2);
process.exit(run.failed || run.errored || run.results.length === 0 ? 1 : 0);
