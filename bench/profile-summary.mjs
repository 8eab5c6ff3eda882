#!/usr/bin/env node
// Summarises the .cpuprofile files written by `bench/load.bench.mjs --cpu-prof DIR`:
// per service, the busy time, the top functions by self time and the self time by package (which library
// or which of our own modules the CPU is spent in).   Usage: node bench/profile-summary.mjs DIR [--top 15]
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 15;
if (!dir) throw new Error('usage: node bench/profile-summary.mjs DIR');

/** which package or module a frame belongs to */
function owner(url, fn) {
  if (!url) return fn === '(garbage collector)' ? '(gc)' : fn === '(idle)' || fn === '(program)' ? fn : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? url.slice(5).split('/').slice(1, 2).join('/') : url.slice(5)}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const m = url.match(/\/(services|packages)\/([^/]+)\/(?:dist|src)\/(.*)$/);
  if (m) return `${m[1] === 'services' ? '' : '@agw/'}${m[2]}:${m[3].split('/').slice(0, -1).join('/') || '.'}`;
  return url;
}

for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const p = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const s of p.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
  const total = (p.endTime - p.startTime) / 1000; // ms
  const perSample = total / p.samples.length;
  const selfFn = new Map();
  const selfOwner = new Map();
  let idle = 0;
  for (const [id, n] of counts) {
    const node = byId.get(id);
    const cf = node.callFrame;
    const ms = n * perSample;
    if (cf.functionName === '(idle)') {
      idle += ms;
      continue;
    }
    const key = `${cf.functionName || '(anonymous)'} ${cf.url ? `${owner(cf.url, cf.functionName)}/${path.basename(cf.url)}:${cf.lineNumber + 1}` : ''}`;
    selfFn.set(key, (selfFn.get(key) ?? 0) + ms);
    const o = owner(cf.url, cf.functionName);
    selfOwner.set(o, (selfOwner.get(o) ?? 0) + ms);
  }
  // inclusive time of our own functions (services/*, packages/*) and of a few library entry points
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map();
  for (const [id, n] of counts) {
    if (byId.get(id).callFrame.functionName === '(idle)') continue;
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur).callFrame;
      if (!/\/(services|packages)\/[^/]+\/dist\//.test(cf.url) || /node_modules/.test(cf.url)) continue;
      const key = `${cf.functionName || '(anonymous)'} ${owner(cf.url, cf.functionName)}/${path.basename(cf.url)}:${cf.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + n * perSample);
    }
  }
  const busy = total - idle;
  console.log(`\n=== ${file}: ${(total / 1000).toFixed(1)} s profiled, busy ${(busy / 1000).toFixed(2)} s (${((busy / total) * 100).toFixed(0)}% of one core)`);
  console.log('  self time by package/module:');
  for (const [k, v] of [...selfOwner].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${((v / busy) * 100).toFixed(1).padStart(5)}%  ${k}`);
  console.log('  our functions, inclusive (time with this frame on the stack; synchronous part only):');
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${((v / busy) * 100).toFixed(1).padStart(5)}%  ${k}`);
  console.log('  top functions (self):');
  for (const [k, v] of [...selfFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${((v / busy) * 100).toFixed(1).padStart(5)}%  ${k}`);
}
