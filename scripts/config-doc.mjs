#!/usr/bin/env node
// Prints docs/configuration.md from the services' own setting declarations (their config.ts), so the
// documentation of every environment variable cannot drift from the code. Run after a build:
//   node scripts/config-doc.mjs > docs/configuration.md
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const services = ['gateway', 'policy', 'audit', 'vault', 'webhook', 'anchor', 'managed'];

const shown = (schema) => {
  try {
    const r = schema.safeParse(undefined);
    if (!r.success) return '*(required)*';
    if (r.data === undefined) return '*(unset)*';
    if (r.data === '') return '*(empty)*';
    // a default under the checkout (a folder of the repository) is shown relative to it, the same on every machine
    const text = typeof r.data === 'string' ? (r.data === ROOT || r.data.startsWith(ROOT + path.sep) ? path.relative(ROOT, r.data) || '.' : r.data) : JSON.stringify(r.data);
    return '`' + text + '`';
  } catch {
    return '';
  }
};

const out = [];
out.push('# Configuration');
out.push('');
out.push('Every service reads its settings from environment variables once at start (`loadConfig`, `packages/shared/src/config.ts`);');
out.push('a bad value stops the service with a message naming the variable. The defaults below work on a developer machine');
out.push('(the local Postgres, Redis and NATS); `npm start` uses them as they are. This page is generated from the code by');
out.push('`node scripts/config-doc.mjs > docs/configuration.md`.');
out.push('');
out.push('Production: set `AGW_PROFILE=production` (turns off the tamper demo defaults and loopback targets where a service');
out.push('honours it), `JWT_SECRET`, the HSM PIN and chain key from secrets (see `deploy/k8s`).');
for (const svc of services) {
  let mod;
  try {
    mod = require(path.join(ROOT, 'services', svc, 'dist', 'config.js'));
  } catch {
    continue;
  }
  const settings = mod[`${svc}Settings`];
  if (!settings) continue;
  out.push('');
  out.push(`## ${svc}`);
  out.push('');
  out.push('| variable | default | meaning |');
  out.push('|---|---|---|');
  for (const s of Object.values(settings)) out.push(`| \`${s.env}\` | ${shown(s.schema)} | ${s.doc.replace(/\|/g, '\\|')} |`);
}
out.push('');
out.push('## Tenant rate-limit defaults');
out.push('');
out.push('A tenant without `rate_limit_rps` / `rate_limit_burst` settings gets `DEFAULT_RATE_LIMIT_RPS=50` and');
out.push('`DEFAULT_RATE_LIMIT_BURST=100`: at most `burst` requests in any sliding window of `burst / rps` seconds (2 s by');
out.push('default), i.e. a sustained 50 requests per second with bursts of up to 100. Every authenticated request counts.');
console.log(out.join('\n'));
