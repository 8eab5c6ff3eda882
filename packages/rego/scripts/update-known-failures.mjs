#!/usr/bin/env node
// Regenerates test/conformance-cases/known-failures.json from a runner --json report:
//   node ../../../shared/conformance/opa/run-conformance.mjs ../../../shared/conformance/opa/cases dist/conformance-adapter.js --json /tmp/conf.json
//   node scripts/update-known-failures.mjs /tmp/conf.json
import fs from 'node:fs';
const j = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const copied = (f) => fs.existsSync(new URL(`../test/conformance-cases/${f}`, import.meta.url));
const fails = j.cases.filter((c) => !c.pass && copied(c.file)).map((c) => `${c.file}: ${c.note}`);
fs.writeFileSync(new URL('../test/conformance-cases/known-failures.json', import.meta.url), JSON.stringify(fails, null, 1) + '\n');
console.log(`${fails.length} known failures`);
