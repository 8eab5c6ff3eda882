#!/usr/bin/env node
// What the contract's messages of one governed call cost to encode and decode here: the two multiplexed
// calls' envelopes (EvaluateCall, EvaluateAnswer, AppendCall, AppendAnswer) filled as the gateway, the
// policy and the audit service fill them (as bench/support/shape-floor.cjs does), through the generated
// ts-proto codecs: encoded as the generated service definitions do (`Buffer.from(X.encode(m).finish())`, a new
// writer per message) and as the fleet does (withReusedWriter, @agw/proto codecs.ts: one writer per process),
// decoded by the generated `decode`. CPU µs per call (process.cpuUsage) over `--n` calls, `--rounds` times; printed, never asserted
// (docs/history/performance-2026.md, "The shape's floor").
//
//   node bench/proto-codec.bench.mjs [--n 20000] [--rounds 3]
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { policy, audit, withReusedWriter } = createRequire(path.join(ROOT, 'packages/shared/package.json'))('@agw/proto');
const fleet = { policy: withReusedWriter(policy.PolicyServiceService).evaluateStream, audit: withReusedWriter(audit.AuditServiceService).appendStream };
const args = process.argv.slice(2);
const opt = (n, d) => Number(args.includes(`--${n}`) ? args[args.indexOf(`--${n}`) + 1] : d);
const N = opt('n', 20000);
const ROUNDS = opt('rounds', 3);

const call = { agent_id: 'load-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { text: '{"q":"benchmark","page":1}' }, params_json: '{"q":"benchmark","page":1}', pii_detected: false, session_id: '' };
/** one call's four messages, as the services build them */
function messages() {
  const actionId = randomUUID();
  const request = policy.EvaluateRequest.fromPartial({ tenant_id: randomUUID(), action_id: actionId, call });
  const decisionFacts = { decision: 'allow', severity: 'none', pii_detected: false, behavioral: { action_count_1h: 5, action_count_24h: 5, tool_count_24h: 5, last_action_seconds_ago: 0 }, passes: 1, evaluated_at: new Date().toISOString() };
  const response = policy.EvaluateResponse.fromPartial({ decision: 'allow', severity: 'none', bundle_revision: 'floor-1', passes: 1, decision_facts: decisionFacts });
  const entry = audit.AuditEntry.fromPartial({ action_id: actionId, ...call, decision: 'allow', severity: 'none', source: 'api', bundle_revision: 'floor-1', details: { text: '{}' }, details_json: '{}', requested_at: new Date().toISOString() });
  const append = audit.AppendRequest.fromPartial({ tenant_id: request.tenant_id, entry, event_kind: 'allowed', decision_facts: response.decision_facts, omit_entry: true, append_key: randomUUID(), tenant_has_webhook: false });
  const record = audit.AuditRecord.fromPartial({ id: 5, tenant_seq: 4, prev_hash: 'f'.repeat(64), record_hash: 'f'.repeat(64), event_queued: true, commit_ms: 1.2 });
  // [generated serializer, deserializer, message, the fleet's serializer]
  return [
    [policy.PolicyServiceService.evaluateStream.requestSerialize, policy.PolicyServiceService.evaluateStream.requestDeserialize, { call_id: 1, request, metadata: {} }, fleet.policy.requestSerialize],
    [policy.PolicyServiceService.evaluateStream.responseSerialize, policy.PolicyServiceService.evaluateStream.responseDeserialize, { call_id: 1, response, error: undefined }, fleet.policy.responseSerialize],
    [audit.AuditServiceService.appendStream.requestSerialize, audit.AuditServiceService.appendStream.requestDeserialize, { call_id: 1, request: append, metadata: {} }, fleet.audit.requestSerialize],
    [audit.AuditServiceService.appendStream.responseSerialize, audit.AuditServiceService.appendStream.responseDeserialize, { call_id: 1, response: record, error: undefined }, fleet.audit.responseSerialize],
  ];
}
const cpu = (f) => {
  const t = process.cpuUsage();
  f();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / N;
};
const sample = Array.from({ length: 1000 }, messages);
console.log(`proto-codec  node ${process.version}; bytes per message: ${sample[0].map(([ser, , m]) => ser(m).length).join(', ')}`);
for (let r = 1; r <= ROUNDS; r++) {
  const build = cpu(() => {
    for (let i = 0; i < N; i++) messages();
  });
  let encodeUs = 0;
  const encoded = [];
  encodeUs = cpu(() => {
    for (let i = 0; i < N; i++) encoded[i % 1000] = sample[i % 1000].map(([ser, , m]) => ser(m));
  });
  const reusedUs = cpu(() => {
    for (let i = 0; i < N; i++) encoded[i % 1000] = sample[i % 1000].map(([, , m, ser]) => ser(m));
  });
  const decodeUs = cpu(() => {
    for (let i = 0; i < N; i++) sample[i % 1000].forEach(([, de], j) => de(encoded[i % 1000][j]));
  });
  console.log(
    `  round ${r}: per governed call, µs of CPU: build the messages ${build.toFixed(1)}, encode all four ${encodeUs.toFixed(1)} (a writer per message, as generated) / ${reusedUs.toFixed(1)} (the process's writer, as the fleet), decode all four ${decodeUs.toFixed(1)}`,
  );
}
