/**
 * Integration (the service's definition started in-process: real Postgres, Redis, NATS and the shadow's evaluation thread): a candidate in shadow decides every
 * governed call beside the live policy, off the answer's path; the report's counts, rules and samples are
 * exact; the shadow ends by itself at max_calls and at its expiry; promotion goes through the tests gate
 * (and its override); start, end, discard and promotion are recorded as policy changes.
 */
import { randomUUID } from 'node:crypto';
import { AppError, type Db, createMetricsRegistry } from '@agw/shared';
import type { TenantPolicies } from '../bundles/tenant-policies';
import type { PolicyChangeFact } from '../changes/policy-change-recorder';
import type { PolicyEvaluation, ToolCallFacts } from '../decisions/policy-evaluation';
import { type StartedPolicy, startPolicy } from '../../test/support/start-policy';
import type { PolicyShadows } from './policy-shadows';

const LIVE = `package agw.custom

import rego.v1

deny contains "no_delete" if input.method == "delete"
`;
const CANDIDATE = `${LIVE}
deny contains "no_wire" if input.tool == "wire_transfer"

test_wire_denied if {
	"no_wire" in deny with input as {"tool": "wire_transfer", "method": "send"}
}
`;
const FAILING = `${CANDIDATE}
test_wrong if {
	count(deny) == 5 with input as {"tool": "x", "method": "y"}
}
`;
// a deliberately slow candidate: each decision walks a large range (tens of milliseconds or more)
const SLOW = `${LIVE}
deny contains "slow_rule" if {
	count([x | some x in numbers.range(1, 1000000); x % 7 == 3]) < 0
}
`;

let policy: StartedPolicy;
let db: Db;
let policies: TenantPolicies;
let shadows: PolicyShadows;
let evaluation: PolicyEvaluation;
const registry = createMetricsRegistry('test');
const recorded: Array<{ tenantId: string; fact: PolicyChangeFact }> = [];

beforeAll(async () => {
  policy = await startPolicy({
    env: { POLICY_CACHE_MS: '60000', POLICY_SHADOW_QUEUE_MAX: '1000' },
    registry,
    overrides: {
      recorder: {
        record: async (tenantId, fact) => {
          recorded.push({ tenantId, fact });
          return randomUUID();
        },
      },
    },
  });
  ({ db, policies, shadows, evaluation } = policy.api);
});
afterAll(() => policy?.close());
// no shadow batch failed after the answer (the service counts and logs such a failure)
afterEach(async () => expect(await registry.getSingleMetricAsString('agw_policy_shadow_failures_total')).toMatch(/^agw_policy_shadow_failures_total({[^}]*})? 0$/m));

const call = (tool: string, method = 'send'): ToolCallFacts => ({ agentId: 'agent-1', agentType: 't', agentVersion: '1.0.0', tool, method, params: {}, piiDetected: false, sessionId: '' });
const decide = async (tenantId: string, tool: string, method?: string) => {
  const actionId = randomUUID();
  const r = await evaluation.evaluate(tenantId, actionId, call(tool, method));
  return { actionId, ...r };
};
const factsOf = (tenantId: string) => recorded.filter((r) => r.tenantId === tenantId).map((r) => r.fact);

test('counts by live → candidate decision, the rules behind the differences and samples are exact; it ends by itself at max_calls', async () => {
  const tenantId = randomUUID();
  await policies.set(tenantId, { template: 'custom', customPolicy: LIVE }, { actor: 'alice@example.com' });
  const started = await shadows.start(tenantId, { customPolicy: CANDIDATE }, { maxCalls: 10 }, 'alice@example.com');
  expect(started).toMatchObject({ status: 'running', shadow: { max_calls: 10, calls: 0, started_by: 'alice@example.com' } });
  const wires: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await decide(tenantId, 'wire_transfer');
    expect(r.decision).toBe('allow'); // the live policy answers
    wires.push(r.actionId);
  }
  for (let i = 0; i < 2; i++) expect((await decide(tenantId, 'read_file')).decision).toBe('allow');
  expect((await decide(tenantId, 'read_file', 'delete')).decision).toBe('deny');
  await shadows.idle();
  const r = await shadows.report(tenantId);
  expect(r.status).toBe('running');
  expect(r.shadow).toMatchObject({ calls: 6, dropped: 0 });
  // most frequent first
  expect(r.figures!.transitions).toEqual([
    { live: 'allow', candidate: 'deny', count: 3 },
    { live: 'allow', candidate: 'allow', count: 2 },
    { live: 'deny', candidate: 'deny', count: 1 },
  ]);
  expect(r.figures!.differing).toBe(3);
  expect(r.figures!.rules).toEqual([{ rule: 'no_wire', change: 'added', count: 3 }]);
  expect(r.figures!.samples.map((s) => s.action_id).sort()).toEqual([...wires].sort());
  expect(r.figures!.samples[0]).toMatchObject({ tool: 'wire_transfer', agent_id: 'agent-1', live_decision: 'allow', live_violations: [], candidate_decision: 'deny', candidate_violations: ['no_wire'] });
  // every call's candidate decision is kept in its batch's row; only the differing calls have a row of their own
  const batches = await db.selectFrom('policy_shadow_batches').select(['action_ids', 'live_decisions', 'candidate_decisions']).where('tenant_id', '=', tenantId).execute();
  const kept = batches.flatMap((b) => b.action_ids.map((id, i) => ({ id, live: b.live_decisions[i], candidate: b.candidate_decisions[i] })));
  expect(kept).toHaveLength(6);
  expect(kept.filter((k) => wires.includes(k.id)).map((k) => `${k.live}->${k.candidate}`)).toEqual(['allow->deny', 'allow->deny', 'allow->deny']);
  const detailed = await db.selectFrom('policy_shadow_decisions').select('action_id').where('tenant_id', '=', tenantId).execute();
  expect(detailed.map((d) => d.action_id).sort()).toEqual([...wires].sort());
  // 6 more calls: only 4 are kept, then it has ended by itself
  for (let i = 0; i < 6; i++) await decide(tenantId, 'wire_transfer');
  await shadows.idle();
  const ended = await shadows.report(tenantId);
  expect(ended).toMatchObject({ status: 'ended', shadow: { calls: 10, end_reason: 'max_calls' } });
  expect(ended.figures!.transitions).toContainEqual({ live: 'allow', candidate: 'deny', count: 7 });
  expect(factsOf(tenantId).map((f) => f.decision)).toEqual(['shadow_started', 'shadow_ended']);
  expect(factsOf(tenantId)[1]).toMatchObject({ actor: 'policy-service', method: 'shadow.end', violations: ['no_wire'], details: { reason: 'max_calls', calls: 10, differing: 7 } });
  // nothing runs any more: calls are no longer shadowed
  await decide(tenantId, 'wire_transfer');
  await shadows.idle();
  expect((await shadows.report(tenantId)).shadow!.calls).toBe(10);
});

test('one shadow at a time (409); discard ends it (recorded) and the live policy stays', async () => {
  const tenantId = randomUUID();
  await policies.set(tenantId, { template: 'custom', customPolicy: LIVE });
  const live = (await policies.active(tenantId)).revision;
  await shadows.start(tenantId, { customPolicy: CANDIDATE }, {}, 'bob@example.com');
  const again = await shadows.start(tenantId, { customPolicy: CANDIDATE }, {}, 'bob@example.com').catch((e) => e);
  expect(again).toBeInstanceOf(AppError);
  expect(again.code).toBe('conflict');
  const bad = await shadows.start(tenantId, { customPolicy: 'package agw.custom\n\np if {\n' }, {}, 'bob@example.com').catch((e) => e);
  expect(bad.code).toBe('invalid_input');
  const bounds = await shadows.start(tenantId, { customPolicy: CANDIDATE }, { maxCalls: 2_000_000 }, 'bob@example.com').catch((e) => e);
  expect(bounds.code).toBe('invalid_input');
  const d = await shadows.discard(tenantId, 'bob@example.com');
  expect(d).toMatchObject({ status: 'discarded', shadow: { end_reason: 'discarded' } });
  expect((await policies.active(tenantId)).revision).toBe(live);
  expect((await shadows.discard(tenantId, 'bob@example.com').catch((e) => e)).code).toBe('not_found');
  expect(factsOf(tenantId).map((f) => [f.decision, f.actor])).toEqual([
    ['shadow_started', 'bob@example.com'],
    ['shadow_discarded', 'bob@example.com'],
  ]);
});

test('a shadow ends by itself at its expiry', async () => {
  const tenantId = randomUUID();
  await shadows.start(tenantId, { template: 'financial' }, { durationSeconds: 1 }, 'carol@example.com');
  await new Promise((r) => setTimeout(r, 1100));
  const r = await shadows.report(tenantId);
  expect(r).toMatchObject({ status: 'ended', shadow: { end_reason: 'expired', policy_template: 'financial' } });
  expect(factsOf(tenantId).map((f) => f.decision)).toEqual(['shadow_started', 'shadow_ended']);
});

test('promotion goes through the tests gate: refused while tests fail, activated with an override whose note is recorded; live decisions change from the next call', async () => {
  const tenantId = randomUUID();
  await policies.set(tenantId, { template: 'custom', customPolicy: LIVE });
  await shadows.start(tenantId, { customPolicy: FAILING }, {}, 'dave@example.com');
  expect((await decide(tenantId, 'wire_transfer')).decision).toBe('allow');
  await shadows.idle(); // kept before the promotion ends the shadow (a call still queued then is not counted)
  const refused = await shadows.promote(tenantId, 'dave@example.com').catch((e) => e);
  expect(refused.code).toBe('invalid_input');
  expect(refused.detail).toEqual([{ loc: ['custom_policy'], type: 'policy_test_failed', msg: expect.stringMatching(/data\.agw\.custom\.test_wrong: FAIL/) }]);
  expect((await shadows.report(tenantId)).status).toBe('running');
  const empty = await shadows.promote(tenantId, 'dave@example.com', { note: '  ' }).catch((e) => e);
  expect(empty.detail[0].loc).toEqual(['override_failing_tests', 'note']);
  const promoted = await shadows.promote(tenantId, 'dave@example.com', { note: 'test_wrong is wrong itself; fixed in the next bundle' });
  expect(promoted.customPolicy).toBe(FAILING);
  expect((await decide(tenantId, 'wire_transfer')).decision).toBe('deny'); // the very next call
  await shadows.idle();
  expect((await shadows.report(tenantId)).shadow).toMatchObject({ status: 'promoted', calls: 1 });
  const facts = factsOf(tenantId);
  expect(facts.map((f) => f.decision)).toEqual(['shadow_started', 'activated_over_failing_tests', 'shadow_promoted']);
  expect(facts[1]).toMatchObject({
    actor: 'dave@example.com',
    method: 'shadow.promote',
    violations: ['data.agw.custom.test_wrong'],
    severity: 'high',
    revision: promoted.revision,
    details: { note: 'test_wrong is wrong itself; fixed in the next bundle', failing_tests: [{ name: 'data.agw.custom.test_wrong', outcome: 'fail' }] },
  });
  expect(facts[2]).toMatchObject({ revision: promoted.revision, violations: ['no_wire'], details: { calls: 1, differing: 1 } });
});

test('a policy change over failing tests: refused without an override, activated and recorded with one', async () => {
  const tenantId = randomUUID();
  const refused = await policies.set(tenantId, { template: 'custom', customPolicy: FAILING }, { actor: 'erin@example.com' }).catch((e) => e);
  expect(refused.code).toBe('invalid_input');
  expect(factsOf(tenantId)).toEqual([]);
  const b = await policies.set(tenantId, { template: 'custom', customPolicy: FAILING }, { actor: 'erin@example.com', overrideFailingTests: { note: 'known broken test' } });
  expect(b.customPolicy).toBe(FAILING);
  expect(factsOf(tenantId)).toEqual([
    expect.objectContaining({ decision: 'activated_over_failing_tests', actor: 'erin@example.com', method: 'activate', violations: ['data.agw.custom.test_wrong'], details: expect.objectContaining({ note: 'known broken test', previous_revision: null }) }),
  ]);
});

test('a slow candidate does not hold up the answers: the live decisions stay fast while the candidate takes long', async () => {
  const tenantId = randomUUID();
  await policies.set(tenantId, { template: 'custom', customPolicy: LIVE });
  await shadows.start(tenantId, { customPolicy: SLOW }, { maxCalls: 20 }, 'frank@example.com');
  const answered: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    await decide(tenantId, 'read_file');
    answered.push(performance.now() - t0);
  }
  await shadows.idle();
  const r = await shadows.report(tenantId);
  expect(r.shadow!.calls).toBe(10);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  // the candidate's own evaluation time, as recorded, is far above what an answer took end to end
  expect(r.figures!.candidateEvalMsAvg).toBeGreaterThan(20);
  expect(median(answered)).toBeLessThan(r.figures!.candidateEvalMsAvg / 4);
}, 60_000); // the slow candidate takes ~0.3 s a call, ten calls: seconds on a quiet machine, more on a busy one
