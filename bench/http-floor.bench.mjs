#!/usr/bin/env node
// What the HTTP framework costs per request, on this machine: the same JSON echo (POST, the governed call's
// body, parsed and answered) three ways, each in its own process, CPU per request from /proc/<pid>/stat:
//   express     the yardstick's echo (bench/support/express-echo.cjs, as `npm run bench:load` runs it)
//   prototypes  node:http with express's request/response prototypes and res.json, no router or body-parser
//               (app settings as the gateway's: no X-Powered-By, no ETag)
//   node:http   node:http, the body parsed and the answer written by hand
// The difference is the ceiling of what taking the governed route out of express could save per call
// (docs/history/performance-2026.md, "What is left, and what would reach 0.40× the echo"). Figures are printed, never asserted.
//
//   node bench/http-floor.bench.mjs [--duration 8] [--connections 32] [--rounds 2]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return Number(i >= 0 ? args[i + 1] : d);
};
const DURATION = opt('duration', 8);
const CONNECTIONS = opt('connections', 32);
const ROUNDS = opt('rounds', 2);
const PORT = 9300;

// the two node:http variants; express resolved from the gateway package (the version the gateway runs)
const expressPath = createRequire(path.join(ROOT, 'services/gateway/package.json')).resolve('express');
const SERVER = `
const http = require('node:http');
const express = require(${JSON.stringify(expressPath)});
const kind = process.argv[1];
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    if (kind === 'prototypes') {
      Object.setPrototypeOf(req, app.request);
      Object.setPrototypeOf(res, app.response);
      req.res = res;
      res.req = req;
      res.locals = Object.create(null);
      res.status(200).json(body);
      return;
    }
    const out = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('ECHO_READY\\n'));
`;

/** utime+stime of a process in ms */
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const body = JSON.stringify({ agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'benchmark', page: 1 } });
const results = new Map();
console.log(`http-floor: ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const [i, kind] of ['express', 'prototypes', 'node:http'].entries()) {
    const port = PORT + i;
    const argv = kind === 'express' ? [path.join(ROOT, 'bench/support/express-echo.cjs'), String(port)] : ['-e', SERVER, kind, String(port)];
    const p = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => p.stdout.once('data', resolve));
    const opts = { url: `http://127.0.0.1:${port}/echo`, method: 'POST', body, headers: { 'content-type': 'application/json' }, connections: CONNECTIONS };
    await autocannon({ ...opts, duration: 2 }); // warm-up
    const c0 = cpuMs(p.pid);
    const r = await autocannon({ ...opts, duration: DURATION });
    const perRequest = (cpuMs(p.pid) - c0) / r.requests.total;
    p.kill();
    if (r.non2xx || r.errors) throw new Error(`${kind}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    results.set(kind, [...(results.get(kind) ?? []), perRequest]);
    console.log(`  round ${round} ${kind.padEnd(10)} ${String(Math.round(r.requests.average)).padStart(6)} req/s   CPU ${perRequest.toFixed(4)} ms per request`);
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const unit = median(results.get('express'));
console.log('  CPU per request, median of the rounds (and in express echoes, the yardstick\'s unit):');
for (const [kind, v] of results) console.log(`    ${kind.padEnd(10)} ${median(v).toFixed(4)} ms = ${(median(v) / unit).toFixed(2)} echoes`);
