/** Integration: the gRPC adapter of the service (its definition started in-process) over a real socket; errors travel back as the same taxonomy. */
import { randomUUID } from 'node:crypto';
import { AppError } from '@agw/shared';
import type { PolicyChangeFact } from '../changes/policy-change-recorder';
import { type StartedPolicy, startPolicy } from '../../test/support/start-policy';

const recorded: PolicyChangeFact[] = [];
let policy: StartedPolicy;
let client: StartedPolicy['client'];

beforeAll(async () => {
  policy = await startPolicy({
    env: { POLICY_CACHE_MS: '1000' },
    overrides: {
      recorder: {
        record: async (_tenantId, fact) => {
          recorded.push(fact);
          return randomUUID();
        },
      },
    },
  });
  ({ client } = policy);
});
afterAll(() => policy?.close());

test('SetTenantPolicy with broken Rego is INVALID_ARGUMENT carrying the 422 detail', async () => {
  const err = await client.setTenantPolicy({ tenant_id: randomUUID(), policy_template: 'custom', policy_config: undefined, policy_config_json: '', has_policy_config: false, custom_policy: 'package agw.custom\n\np if {\n', has_custom_policy: true, actor: '', override_failing_tests: undefined }).catch((e) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err.code).toBe('invalid_input');
  expect(err.detail[0]).toMatchObject({ loc: ['custom_policy'], type: 'rego_parse_error', msg: expect.stringMatching(/^policy\.rego:\d+:\d+: /) });
});

test('SetTenantPolicy refuses a custom policy whose tests fail (422 naming them) and activates it once they pass', async () => {
  const tenantId = randomUUID();
  const source = (limit: number) => `package agw.custom

findings contains {"id": "too_much", "kind": "violation", "severity": "high"} if input.call.params.amount > ${limit}

decision := {"findings": findings}

test_small_amount_passes if {
	count(findings) == 0 with input as {"call": {"params": {"amount": 50}}}
}

test_large_amount_denied if {
	count(findings) == 1 with input as {"call": {"params": {"amount": 500}}}
}

test_error if {
	x := 1 / 0
	x > 0
}
`;
  const set = (customPolicy: string, note?: string) =>
    client.setTenantPolicy({ tenant_id: tenantId, policy_template: 'custom', policy_config: undefined, policy_config_json: '', has_policy_config: false, custom_policy: customPolicy, has_custom_policy: true, actor: 'ann@example.com', override_failing_tests: note === undefined ? undefined : { note } });
  const err = await set(source(1000)).catch((e) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err.code).toBe('invalid_input');
  expect(err.detail).toEqual([
    { loc: ['custom_policy'], type: 'policy_test_failed', msg: 'policy.rego:11: data.agw.custom.test_large_amount_denied: FAIL: a custom policy whose tests fail cannot be activated' },
    { loc: ['custom_policy'], type: 'policy_test_error', msg: expect.stringMatching(/^policy\.rego:15: data\.agw\.custom\.test_error: ERROR \(eval_builtin_error: div: divide by zero\): /) },
  ]);
  // nothing was activated
  expect((await client.getTenantPolicy({ tenant_id: tenantId })).custom_policy).toBe('');
  expect(recorded).toEqual([]);
  // a human's override needs a note; with one, the policy is activated and the override recorded
  const noNote = await set(source(1000), ' ').catch((e) => e);
  expect(noNote.detail[0]).toMatchObject({ loc: ['override_failing_tests', 'note'], type: 'missing' });
  const overridden = await set(source(1000), 'the limit moves to 1000 today; tests follow');
  expect(overridden.custom_policy).toBe(source(1000));
  expect(recorded).toEqual([
    expect.objectContaining({
      decision: 'activated_over_failing_tests',
      actor: 'ann@example.com',
      violations: ['data.agw.custom.test_large_amount_denied', 'data.agw.custom.test_error'],
      revision: overridden.bundle!.revision,
      details: expect.objectContaining({ note: 'the limit moves to 1000 today; tests follow' }),
    }),
  ]);
  const good = source(100).replace(/\ntest_error if \{[^}]*\}\n/, '\n');
  const ok = await set(good);
  expect(ok.custom_policy).toBe(good);
});

test('Evaluate, ListTemplates, ListRules, GetBundleStatus', async () => {
  const tenantId = randomUUID();
  const r = await client.evaluate({
    tenant_id: tenantId,
    action_id: randomUUID(),
    call: { agent_id: 'a', agent_type: 't', agent_version: '1.0.0', tool: 'svc_x', method: 'delete', params: { text: '{}' }, params_json: '{}', pii_detected: false, session_id: '' },
  });
  expect(r).toMatchObject({ decision: 'requires_human', requires_human: true, violations: ['destructive_action_requires_approval'], alert_tier: 'P3', passes: 2 });
  expect(r.eval_ms).toBeGreaterThan(0);
  // what the record lacks for the replay input, typed (agw.decision.v1.DecisionFacts), for the caller to commit with the record
  expect(r.decision_facts).toMatchObject({ decision: 'requires_human', violations: ['destructive_action_requires_approval'], pii_detected: false, passes: 2 });
  expect(r.decision_facts!.behavioral).toEqual({ action_count_1h: 1, action_count_24h: 1, tool_count_24h: 1, violation_count_24h: 0, anomaly_score: 0, last_action_seconds_ago: -1, session_total_amount: 0 });
  const score = await client.getAnomalyScore({ tenant_id: tenantId, agent_id: 'a' });
  expect(score.factors).toMatchObject({ action_count_1h: 1, action_count_24h: 1, violation_count_24h: 0 });
  expect((await client.getAnomalyScore({ tenant_id: tenantId, agent_id: 'nobody' })).factors).toBeUndefined();
  const status = await client.getBundleStatus({ tenant_id: tenantId });
  expect(r.bundle_revision).toBe(status.revision);
  expect((await client.listTemplates({})).templates.map((t) => t.name)).toEqual(['general', 'financial', 'email', 'crm', 'data_access']);
  expect((await client.listRules({ tenant_id: tenantId })).rules.length).toBe(4);
  const bad = await client.evaluate({ tenant_id: tenantId, action_id: randomUUID(), call: undefined }).catch((e) => e);
  expect(bad.code).toBe('invalid_input');
  const notJson = await client.evaluate({ tenant_id: tenantId, action_id: randomUUID(), call: { agent_id: 'a', agent_type: 't', agent_version: '1.0.0', tool: 'x', method: 'm', params: { text: '{' }, params_json: '{', pii_detected: false, session_id: '' } }).catch((e) => e);
  expect(notJson.code).toBe('invalid_input');
  expect(notJson.detail[0].loc).toEqual(['call.params']);
});
