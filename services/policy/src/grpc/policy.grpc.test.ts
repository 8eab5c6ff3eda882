/** Integration: the gRPC adapter over a real socket; errors travel back as the same taxonomy. */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { policy as pb } from '@agw/proto';
import { AppError, createClient, createDb, createLogger, createRedis, migrateToLatest, startGrpcServer } from '@agw/shared';
import { BehaviorStore } from '../behavior/behavior-store';
import { TenantPolicies } from '../bundles/tenant-policies';
import { TenantPolicyRepository } from '../bundles/tenant-policy.repository';
import type { PolicyChangeFact } from '../changes/policy-change-recorder';
import { PolicyEvaluation } from '../decisions/policy-evaluation';
import { identityRevealer } from '../replay/params-revealer';
import { ReplayService } from '../replay/replay.service';
import type { PolicyShadows } from '../shadow/policy-shadows';
import { TemplateCatalog } from '../templates/template-catalog';
import { policyGrpcService } from './policy.grpc';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
const logger = createLogger('test', 'silent');
let close: () => Promise<void>;
const recorded: PolicyChangeFact[] = [];
let client: ReturnType<typeof createClient<typeof pb.PolicyServiceService>>;

beforeAll(async () => {
  await migrateToLatest(url);
  const db = createDb(url);
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const catalog = await TemplateCatalog.load(path.resolve(__dirname, '../../templates'));
  const policies = new TenantPolicies(new TenantPolicyRepository(db), catalog, logger, {
    cacheMs: 1000,
    recorder: {
      record: async (_tenantId, fact) => {
        recorded.push(fact);
        return randomUUID();
      },
    },
  });
  const behavior = new BehaviorStore(redis);
  const server = await startGrpcServer('127.0.0.1', 0, [
    policyGrpcService(
      {
        catalog,
        policies,
        behavior,
        evaluation: new PolicyEvaluation(policies, behavior),
        replay: new ReplayService(policies, { byActions: async () => [] }, identityRevealer),
        // no shadow runs in these tests (policy-shadows.test.ts has them)
        shadows: {} as PolicyShadows,
      },
      logger,
    ),
  ]);
  client = createClient(pb.PolicyServiceClient, `127.0.0.1:${server.port}`, 'policy engine');
  close = async () => {
    client.close();
    await server.close();
    redis.disconnect();
    await db.destroy();
  };
});
afterAll(() => close());

test('SetTenantPolicy with broken Rego is INVALID_ARGUMENT carrying the 422 detail', async () => {
  const err = await client.setTenantPolicy({ tenantId: randomUUID(), policyTemplate: 'custom', policyConfigJson: '', hasPolicyConfig: false, customPolicy: 'package agw.custom\n\np if {\n', hasCustomPolicy: true, actor: '', overrideFailingTests: undefined }).catch((e) => e);
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
    client.setTenantPolicy({ tenantId, policyTemplate: 'custom', policyConfigJson: '', hasPolicyConfig: false, customPolicy, hasCustomPolicy: true, actor: 'ann@example.com', overrideFailingTests: note === undefined ? undefined : { note } });
  const err = await set(source(1000)).catch((e) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err.code).toBe('invalid_input');
  expect(err.detail).toEqual([
    { loc: ['custom_policy'], type: 'policy_test_failed', msg: 'policy.rego:11: data.agw.custom.test_large_amount_denied: FAIL: a custom policy whose tests fail cannot be activated' },
    { loc: ['custom_policy'], type: 'policy_test_error', msg: expect.stringMatching(/^policy\.rego:15: data\.agw\.custom\.test_error: ERROR \(eval_builtin_error: div: divide by zero\): /) },
  ]);
  // nothing was activated
  expect((await client.getTenantPolicy({ tenantId })).customPolicy).toBe('');
  expect(recorded).toEqual([]);
  // a human's override needs a note; with one, the policy is activated and the override recorded
  const noNote = await set(source(1000), ' ').catch((e) => e);
  expect(noNote.detail[0]).toMatchObject({ loc: ['override_failing_tests', 'note'], type: 'missing' });
  const overridden = await set(source(1000), 'the limit moves to 1000 today; tests follow');
  expect(overridden.customPolicy).toBe(source(1000));
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
  expect(ok.customPolicy).toBe(good);
});

test('Evaluate, ListTemplates, ListRules, GetBundleStatus', async () => {
  const tenantId = randomUUID();
  const r = await client.evaluate({
    tenantId,
    actionId: randomUUID(),
    call: { agentId: 'a', agentType: 't', agentVersion: '1.0.0', tool: 'svc_x', method: 'delete', paramsJson: '{}', piiDetected: false, sessionId: '' },
    storedParamsJson: '{}',
  });
  expect(r).toMatchObject({ decision: 'requires_human', requiresHuman: true, violations: ['destructive_action_requires_approval'], alertTier: 'P3', passes: 2 });
  expect(r.evalMs).toBeGreaterThan(0);
  // the replay input, typed (agw.decision.v1.DecisionInput), for the caller to commit with the record
  expect(r.decisionInput).toMatchObject({ decision: 'requires_human', violations: ['destructive_action_requires_approval'], bundleRevision: r.bundleRevision, passes: 2 });
  expect(r.decisionInput!.call).toMatchObject({ agentId: 'a', tool: 'svc_x', method: 'delete', paramsJson: '{}', piiDetected: false });
  expect(r.decisionInput!.behavioral).toEqual({ actionCount1h: 1, actionCount24h: 1, toolCount24h: 1, violationCount24h: 0, anomalyScore: 0, lastActionSecondsAgo: -1, sessionTotalAmount: 0 });
  const score = await client.getAnomalyScore({ tenantId, agentId: 'a' });
  expect(score.factors).toMatchObject({ actionCount1h: 1, actionCount24h: 1, violationCount24h: 0 });
  expect((await client.getAnomalyScore({ tenantId, agentId: 'nobody' })).factors).toBeUndefined();
  const status = await client.getBundleStatus({ tenantId });
  expect(r.bundleRevision).toBe(status.revision);
  expect((await client.listTemplates({})).templates.map((t) => t.name)).toEqual(['general', 'financial', 'email', 'crm', 'data_access']);
  expect((await client.listRules({ tenantId })).rules.length).toBe(4);
  const bad = await client.evaluate({ tenantId, actionId: randomUUID(), call: undefined, storedParamsJson: '' }).catch((e) => e);
  expect(bad.code).toBe('invalid_input');
  // params with PII but no stored (encrypted) form: refused, plaintext is never stored
  const plain = await client
    .evaluate({ tenantId, actionId: randomUUID(), call: { agentId: 'a', agentType: 't', agentVersion: '1.0.0', tool: 'x', method: 'm', paramsJson: '{"email":"a@b.example"}', piiDetected: true, sessionId: '' }, storedParamsJson: '' })
    .catch((e) => e);
  expect(plain.code).toBe('invalid_input');
  expect(plain.detail[0].loc).toEqual(['stored_params_json']);
  const notJson = await client.evaluate({ tenantId, actionId: randomUUID(), call: { agentId: 'a', agentType: 't', agentVersion: '1.0.0', tool: 'x', method: 'm', paramsJson: '{}', piiDetected: false, sessionId: '' }, storedParamsJson: '{' }).catch((e) => e);
  expect(notJson.code).toBe('invalid_input');
  expect(notJson.detail[0].loc).toEqual(['stored_params_json']);
});
