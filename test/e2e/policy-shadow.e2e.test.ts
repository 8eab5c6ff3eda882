/**
 * E2E: a candidate policy in shadow on live traffic, through the public API only (docs/policy.md, "Shadow
 * rollout"): a candidate that denies one tool under a loop of governed calls (as bench:load sends them,
 * several in flight), with the counts, rules and samples exact and each sample linked to its audit record;
 * promotion changes the live decision from the very next call; a deliberately slow candidate (a heavy Rego
 * rule) leaves the answers as fast as without it; the override of failing tests is recorded; start,
 * promotion and discarding are control_plane records and `policy.changed` webhook events.
 */
import { type Tenant, api, call, eventually, humanSession, patientTenant } from './support/api';
import { type WebhookReceiver, startWebhookReceiver } from './support/webhook-receiver';

jest.setTimeout(240_000);

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
});

const LIVE = `package agw.custom

import rego.v1

deny contains "no_delete" if input.method == "delete"
`;
const WIRE = 'svc_payments_wire';
const CANDIDATE = `${LIVE}
deny contains "no_wire" if input.tool == "${WIRE}"

test_wire_denied if {
	"no_wire" in deny with input as {"tool": "${WIRE}", "method": "send"}
}
`;
const FAILING = `${LIVE}
test_wrong if {
	count(deny) == 3 with input as {"tool": "x", "method": "delete"}
}
`;
// deliberately slow: every decision walks a range of two million numbers (hundreds of milliseconds)
const SLOW = `${LIVE}
deny contains "slow_rule" if {
	count([x | some x in numbers.range(1, 2000000); x % 7 == 3]) < 0
}
`;

const policyEvents = (got: WebhookReceiver['got'], decision: string) =>
  got.filter((h) => h.headers['x-service-event'] === 'policy.changed' && h.json.data.decision === decision);

async function withWebhook(t: Tenant) {
  const hooks = await startWebhookReceiver();
  closers.push(hooks.close);
  const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { custom_policy: LIVE, policy_template: 'custom', webhook_url: hooks.url, webhook_events: ['policy.changed'] } });
  expect(r.status).toBe(200);
  return { hooks, liveRevision: r.body.bundle_revision as string };
}

test('a candidate that denies one tool: counts, rules and samples exact under a loop of calls; samples link to their records; promotion changes the next call', async () => {
  const t = await patientTenant('Shadow');
  const { hooks, liveRevision } = await withWebhook(t);
  expect((await api('GET', '/policy/shadow', { key: t.apiKey })).body).toMatchObject({ status: 'none', live_revision: liveRevision, calls: 0 });

  const started = await api('PUT', '/policy/shadow', { key: t.apiKey, body: { custom_policy: CANDIDATE, max_calls: 1000, duration_seconds: 3600 } });
  expect(started.status).toBe(201);
  expect(started.body).toMatchObject({ status: 'running', max_calls: 1000, calls: 0, live_revision: liveRevision, policy_template: 'custom', started_by: `api_key:${t.tenantId}` });
  expect(started.body.revision).not.toBe(liveRevision);
  expect((await api('PUT', '/policy/shadow', { key: t.apiKey, body: { custom_policy: CANDIDATE } })).status).toBe(409);

  // 60 governed calls, 4 in flight at a time: every third one is the tool the candidate denies
  const N = 60;
  const wires: string[] = [];
  const others: string[] = [];
  for (let i = 0; i < N; i += 4) {
    const batch = await Promise.all(
      [0, 1, 2, 3].filter((j) => i + j < N).map(async (j) => {
        const wire = (i + j) % 3 === 0;
        const r = await call(t.apiKey, wire ? { tool: WIRE, method: 'send', params: { amount: 10 } } : {});
        return { wire, r };
      }),
    );
    for (const { wire, r } of batch) {
      expect(r.status).toBe(200); // the live policy answers: allowed
      (wire ? wires : others).push(r.body.action_id);
    }
  }
  expect(wires.length).toBe(20);
  const report = await eventually(async () => {
    const r = await api('GET', '/policy/shadow', { key: t.apiKey });
    return r.body.calls === N ? r.body : undefined;
  }, 30_000);
  expect(report).toMatchObject({ status: 'running', calls: N, differing: 20, dropped: 0 });
  expect(report.transitions).toEqual([
    { live: 'allow', candidate: 'allow', count: 40 },
    { live: 'allow', candidate: 'deny', count: 20 },
  ]);
  expect(report.rules).toEqual([{ rule: 'no_wire', change: 'added', count: 20 }]);
  expect(report.samples.length).toBe(20);
  expect(report.samples.map((s: any) => s.action_id).sort()).toEqual([...wires].sort());
  for (const s of report.samples) expect(s).toMatchObject({ tool: WIRE, live_decision: 'allow', live_violations: [], candidate_decision: 'deny', candidate_violations: ['no_wire'], record: `/api/audit/actions/${s.action_id}` });
  // a sample's link is its audit record: the live decision under the live revision
  const rec = await api('GET', report.samples[0].record.replace(/^\/api/, ''), { key: t.apiKey });
  expect(rec.status).toBe(200);
  expect(rec.body.records[0]).toMatchObject({ action_id: report.samples[0].action_id, decision: 'allow', tool: WIRE, bundle_revision: liveRevision, source: 'mcp_governed' });

  const start = await eventually(async () => policyEvents(hooks.got, 'shadow_started')[0], 20_000);
  expect(start.json.data).toMatchObject({ tool: 'policy', method: 'shadow.start', agent_id: `api_key:${t.tenantId}`, details: { shadow_id: report.shadow_id, live_revision: liveRevision, max_calls: 1000 } });

  // promotion: the candidate is live from the very next call
  const promoted = await api('POST', '/policy/shadow/promote', { key: t.apiKey });
  expect(promoted.status).toBe(200);
  expect(promoted.body).toMatchObject({ policy_template: 'custom', bundle_revision: report.revision });
  const next = await call(t.apiKey, { tool: WIRE, method: 'send', params: { amount: 10 } });
  expect(next.status).toBe(403);
  expect(next.body.detail.violations).toEqual(['no_wire']);
  const after = await api('GET', '/policy/shadow', { key: t.apiKey });
  expect(after.body).toMatchObject({ status: 'promoted', end_reason: 'promoted', live_revision: report.revision, calls: N });
  const promo = await eventually(async () => policyEvents(hooks.got, 'shadow_promoted')[0], 20_000);
  expect(promo.json.data).toMatchObject({ method: 'shadow.promote', violations: ['no_wire'], details: { shadow_id: report.shadow_id, calls: N, differing: 20 } });
  // the control_plane records of the shadow, in the chain
  const log = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
  const changes = log.body.records.filter((r: any) => r.source === 'control_plane' && r.tool === 'policy').map((r: any) => r.decision);
  // the shadow's own records (the policy change it made live is also recorded, as every settings change: `changed`)
  expect(changes.filter((d: string) => d.startsWith('shadow_')).sort()).toEqual(['shadow_promoted', 'shadow_started']);
  expect((await api('POST', '/policy/shadow/promote', { key: t.apiKey })).status).toBe(404);
});

test('a slow candidate does not hold up the answers: answers stay fast while the candidate takes hundreds of milliseconds', async () => {
  const t = await patientTenant('Shadow');
  await withWebhook(t);
  // the answers without a shadow
  const timed = async () => {
    const t0 = performance.now();
    const r = await call(t.apiKey);
    expect(r.status).toBe(200);
    return performance.now() - t0;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const before: number[] = [];
  for (let i = 0; i < 10; i++) before.push(await timed());
  expect((await api('PUT', '/policy/shadow', { key: t.apiKey, body: { custom_policy: SLOW, max_calls: 10 } })).status).toBe(201);
  const during: number[] = [];
  for (let i = 0; i < 10; i++) during.push(await timed());
  const report = await eventually(async () => {
    const r = await api('GET', '/policy/shadow', { key: t.apiKey });
    return r.body.calls === 10 ? r.body : undefined;
  }, 60_000);
  // it ended by itself at max_calls
  expect(report).toMatchObject({ status: 'ended', end_reason: 'max_calls', calls: 10, differing: 0 });
  const cand = report.eval_ms.candidate_avg;
  console.log(`slow candidate: answers median ${median(before).toFixed(1)} ms without a shadow, ${median(during).toFixed(1)} ms with it; candidate evaluation ${cand.toFixed(1)} ms on average (live ${report.eval_ms.live_avg.toFixed(2)} ms)`);
  expect(cand).toBeGreaterThan(100);
  // no answer waited for the candidate: each answer took far less than one candidate evaluation
  expect(Math.max(...during)).toBeLessThan(cand);
  expect(median(during)).toBeLessThan(median(before) + 25);
});

test('the tests gate: refused without an override; a human override with a note is recorded (control_plane record and policy.changed); discarding a shadow is recorded', async () => {
  const t = await patientTenant('Shadow');
  const { hooks } = await withWebhook(t);
  const refused = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { custom_policy: FAILING } });
  expect(refused.status).toBe(422);
  expect(refused.body.detail[0]).toMatchObject({ type: 'policy_test_failed' });
  const token = await humanSession(t);
  const noNote = await api('PATCH', '/dashboard/settings', { token, body: { custom_policy: FAILING, override_failing_tests: { note: ' ' } } });
  expect(noNote.status).toBe(422);
  const alone = await api('PATCH', '/dashboard/settings', { token, body: { policy_template: 'general', override_failing_tests: { note: 'why' } } });
  expect(alone.status).toBe(422);
  const ok = await api('PATCH', '/dashboard/settings', { token, body: { custom_policy: FAILING, override_failing_tests: { note: 'test_wrong expects 3 denials; the rule set changed, test fixed next' } } });
  expect(ok.status).toBe(200);
  expect(ok.body.custom_policy).toBe(FAILING);
  const hook = await eventually(async () => policyEvents(hooks.got, 'activated_over_failing_tests')[0], 20_000);
  expect(hook.json.data).toMatchObject({
    agent_id: t.email,
    tool: 'policy',
    method: 'activate',
    violations: ['data.agw.custom.test_wrong'],
    severity: 'high',
    requires_human: true,
    details: { note: 'test_wrong expects 3 denials; the rule set changed, test fixed next', revision: ok.body.bundle_revision },
  });
  const rec = await api('GET', `/audit/actions/${hook.json.data.action_id}`, { key: t.apiKey });
  expect(rec.body.records[0]).toMatchObject({ source: 'control_plane', decision: 'activated_over_failing_tests', agent_id: t.email, bundle_revision: ok.body.bundle_revision, details: { note: 'test_wrong expects 3 denials; the rule set changed, test fixed next' } });

  // a shadow discarded: the live policy stays
  expect((await api('PUT', '/policy/shadow', { token, body: { policy_template: 'financial', expires_at: new Date(Date.now() + 600_000).toISOString() } })).status).toBe(201);
  const d = await api('DELETE', '/policy/shadow', { token });
  expect(d.status).toBe(200);
  expect(d.body).toMatchObject({ status: 'discarded', end_reason: 'discarded', policy_template: 'financial', live_revision: ok.body.bundle_revision });
  expect((await api('DELETE', '/policy/shadow', { token })).status).toBe(404);
  const disc = await eventually(async () => policyEvents(hooks.got, 'shadow_discarded')[0], 20_000);
  expect(disc.json.data).toMatchObject({ agent_id: t.email, method: 'shadow.discard' });
  const bad = await api('PUT', '/policy/shadow', { token, body: { max_calls: 5 } });
  expect(bad.status).toBe(422);
});
