// The speed of one core of this machine, in CPU microseconds per reference operation: pure JavaScript work of
// the kind a service does per governed call (parse the call's JSON, build a record, serialise it, SHA-256 it,
// split the text), no I/O and no system call. `npm run bench:load` runs it pinned to each core in turn
// (taskset) with the echo's node, and prints the figures beside the yardstick: on a virtual machine the
// cores need not be equal (docs/performance.md, "Tenth session": one of this machine's two vCPUs does the
// same work in 1.6 times the CPU time of the other, with no steal time reported), and a process's CPU time
// per request then depends on the core it ran on.
//   node bench/support/core-speed.cjs [batches]     prints one JSON line: { "us_per_op": <median of the last half of the batches> }
const crypto = require('node:crypto');

const BODY = JSON.stringify({ agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'benchmark', page: 1 } });
const PER_BATCH = 20_000;
const BATCHES = Number(process.argv[2] ?? 16);

function operation(i) {
  const call = JSON.parse(BODY);
  const record = { id: `act_${i.toString(36)}`, tenant_id: 'tenant-1', decision: i % 7 ? 'allow' : 'deny', requested_at: new Date(1_700_000_000_000 + i).toISOString(), ...call, params: { ...call.params, n: i } };
  const text = JSON.stringify(record);
  return crypto.hash('sha256', text, 'hex').charCodeAt(i & 63) + text.split(',').length;
}

let sink = 0;
const perOp = [];
for (let b = 0; b < BATCHES; b++) {
  const t = process.cpuUsage();
  for (let i = 0; i < PER_BATCH; i++) sink += operation(i);
  const d = process.cpuUsage(t);
  perOp.push((d.user + d.system) / PER_BATCH);
}
// the first batches run while V8 tiers the code up: the median of the second half is the steady figure
const steady = perOp.slice(BATCHES >> 1).sort((a, b) => a - b);
console.log(JSON.stringify({ us_per_op: steady[steady.length >> 1], sink: sink > 0 }));
