// The speed of one core of this machine, in CPU microseconds per reference operation: pure JavaScript work of
// the kind a service does per governed call (parse the call's JSON, build a record, serialise it, SHA-256 it,
// split the text), no I/O and no system call. On a virtual machine the cores need not be equal nor steady:
// on Node 24 this machine's two vCPUs took 2.7 and 4.4 µs for the same operation, both 2.7 a few minutes
// later, 3.5-3.7 while the fleet ran, with no steal time reported (docs/performance.md, "Tenth session"),
// and a process's CPU time per request moves with them. `npm run bench:load` runs one of these pinned to
// each core (taskset) for the whole run, on its own node.
//
//   node bench/support/core-speed.cjs               one measurement: prints { "us_per_op": <median of the steady batches> }
//   node bench/support/core-speed.cjs --sample MS   samples: a batch of 200 operations every MS ms (well under 1 % of
//                                                   a core) until stdin closes; each line "report" on stdin answers one
//                                                   JSON line { "us_per_op": <median since the last report>, "n": <batches> }
const crypto = require('node:crypto');
const readline = require('node:readline');

const BODY = JSON.stringify({ agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'benchmark', page: 1 } });

function operation(i) {
  const call = JSON.parse(BODY);
  const record = { id: `act_${i.toString(36)}`, tenant_id: 'tenant-1', decision: i % 7 ? 'allow' : 'deny', requested_at: new Date(1_700_000_000_000 + i).toISOString(), ...call, params: { ...call.params, n: i } };
  const text = JSON.stringify(record);
  return crypto.hash('sha256', text, 'hex').charCodeAt(i & 63) + text.split(',').length;
}

let sink = 0;
/** CPU µs per operation over one batch of `n` */
function batch(n) {
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) sink += operation(i);
  const d = process.cpuUsage(t);
  return (d.user + d.system) / n;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// V8 tiers the code up during the first batches: 8 batches of 20,000 first, the steady figure is the median
// of their second half
const warm = Array.from({ length: 8 }, () => batch(20_000)).slice(4);
const at = process.argv.indexOf('--sample');
if (at < 0) {
  console.log(JSON.stringify({ us_per_op: median(warm), sink: sink > 0 }));
} else {
  const every = Number(process.argv[at + 1] ?? 200);
  let samples = [];
  const timer = setInterval(() => samples.push(batch(200)), every);
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() !== 'report') return;
    console.log(JSON.stringify({ us_per_op: samples.length ? median(samples) : null, n: samples.length }));
    samples = [];
  });
  process.stdin.on('end', () => clearInterval(timer));
  console.log(JSON.stringify({ ready: true, us_per_op: median(warm) }));
}
