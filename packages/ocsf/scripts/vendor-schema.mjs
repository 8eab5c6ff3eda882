#!/usr/bin/env node
// Copies the part of the OCSF schema this package maps to (the API Activity class, its parents, the
// profiles it can declare, and every object they reach) out of a checkout of github.com/ocsf/ocsf-schema
// at a release tag, into schema/<version>/. Run by hand when moving to a new release, never by a build:
//
//   git clone https://github.com/ocsf/ocsf-schema /tmp/ocsf && git -C /tmp/ocsf checkout 1.8.0
//   node packages/ocsf/scripts/vendor-schema.mjs /tmp/ocsf
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const src = process.argv[2];
if (!src) throw new Error('usage: vendor-schema.mjs <ocsf-schema checkout>');
const read = (rel) => JSON.parse(fs.readFileSync(path.join(src, rel), 'utf8'));
const version = read('version.json').version;
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'schema', version);
const EVENTS = ['events/base_event.json', 'events/application/application.json', 'events/application/api_activity.json'];
const dictionary = read('dictionary.json');
const BASE = new Set(Object.keys(dictionary.types.attributes));
const files = new Set(['dictionary.json', 'categories.json', 'version.json', 'LICENSE', ...EVENTS]);
for (const f of fs.readdirSync(path.join(src, 'profiles'))) files.add(`profiles/${f}`);

// every object reachable from the events' and profiles' attributes, through attributes and `extends`
const pending = [];
const typeOf = (name, attr) => attr?.type ?? dictionary.attributes[name]?.type;
const visit = (json) => {
  for (const [name, attr] of Object.entries(json.attributes ?? {})) {
    if (name === '$include') {
      for (const inc of [attr].flat()) if (!files.has(inc)) (files.add(inc), visit(read(inc)));
      continue;
    }
    const t = typeOf(name, attr);
    if (t && !BASE.has(t) && t !== 'object') pending.push(t);
  }
  if (json.extends && fs.existsSync(path.join(src, 'objects', `${json.extends}.json`))) pending.push(json.extends);
};
for (const f of [...files].filter((f) => f.endsWith('.json') && !['dictionary.json', 'categories.json', 'version.json'].includes(f))) visit(read(f));
const seen = new Set();
while (pending.length) {
  const o = pending.pop();
  if (seen.has(o)) continue;
  seen.add(o);
  const rel = `objects/${o}.json`;
  files.add(rel);
  visit(read(rel));
}
fs.rmSync(out, { recursive: true, force: true });
for (const f of files) {
  fs.mkdirSync(path.dirname(path.join(out, f)), { recursive: true });
  fs.copyFileSync(path.join(src, f), path.join(out, f));
}
console.log(`OCSF ${version}: ${files.size} files (${seen.size} objects) -> ${path.relative(process.cwd(), out)}`);
