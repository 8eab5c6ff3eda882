#!/usr/bin/env node
// Runs OPA's conformance cases (from /work/shared beside the clone) against dist/conformance-adapter.js.
// Extra arguments are passed to the runner (e.g. -v --filter strings).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = path.resolve(pkg, '../../../shared/conformance/opa');
const runner = path.join(shared, 'run-conformance.mjs');
if (!fs.existsSync(runner)) {
  console.log(`conformance: ${shared} not present; skipping (the OPA conformance cases are not part of the repository)`);
  process.exit(0);
}
const adapter = path.join(pkg, 'dist/conformance-adapter.js');
if (!fs.existsSync(adapter)) { console.error('conformance: build first (pnpm --filter @agw/rego build)'); process.exit(2); }
const r = spawnSync(process.execPath, [runner, path.join(shared, 'cases'), adapter, ...process.argv.slice(2)], { cwd: pkg, stdio: 'inherit' });
process.exit(r.status ?? 1);
