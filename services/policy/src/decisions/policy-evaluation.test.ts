/**
 * Integration: the policy service's domain against the real local Postgres and Redis: two passes,
 * bundles and revisions, custom policies, the replay input each decision answers, exact replay (the
 * inputs as the audit service gives them back: services/audit/test/append-grpc.int.test.ts tests that
 * commit and read through gRPC).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { decision } from '@agw/proto';
import { type ActionRecord, InputError, TEST_REDIS_URL, createDb, createLogger, createRedis, decisionInputMessage, decisionInputRow, openTestDb, waitForRedis } from '@agw/shared';
import { BehaviorStore } from '../behavior/behavior-store';
import { TenantPolicies } from '../bundles/tenant-policies';
import { TenantPolicyRepository } from '../bundles/tenant-policy.repository';
import { ReplayService } from '../replay/replay.service';
import { TemplateCatalog } from '../templates/template-catalog';
import { type EvaluationResult, PolicyEvaluation, type ToolCallFacts } from './policy-evaluation';

const redis = createRedis(TEST_REDIS_URL);
let db: ReturnType<typeof createDb>;
let policies: TenantPolicies;
let evaluation: PolicyEvaluation;
let replay: ReplayService;
const revealed: string[] = [];
/** the replay inputs as committed (tenant → action → input): what AuditService.GetDecisionInputs answers */
const committed = new Map<string, Map<string, decision.DecisionInput>>();
/**
 * What the audit service commits for a decision: the replay input made from the call's record (the stored
 * params, `stored`) and the decision's facts, with the shared conversions it uses.
 */
const commit = (tenant: string, actionId: string, c: ToolCallFacts, r: EvaluationResult, stored: Record<string, unknown> = c.params) => {
  const record: ActionRecord = {
    action_id: actionId,
    agent_id: c.agentId,
    agent_type: c.agentType,
    agent_version: c.agentVersion,
    tool: c.tool,
    method: c.method,
    params: stored,
    decision: r.decision,
    violations: r.violations,
    severity: r.severity,
    alert_tier: null,
    requires_human: false,
    execution_mode: null,
    source: 'mcp_governed',
    session_id: c.sessionId || null,
    bundle_revision: r.bundleRevision,
    details: {},
    requested_at: new Date().toISOString(),
  };
  const input = decisionInputMessage(decisionInputRow(record, r.facts));
  if (!committed.has(tenant)) committed.set(tenant, new Map());
  committed.get(tenant)!.set(input.action_id, structuredClone(input));
};

beforeAll(async () => {
  db = await openTestDb();
  await waitForRedis(redis);
  const catalog = await TemplateCatalog.load(path.resolve(__dirname, '../../templates'));
  policies = new TenantPolicies(new TenantPolicyRepository(db), catalog, createLogger('test', 'silent'), { cacheMs: 1000 });
  evaluation = new PolicyEvaluation(policies, new BehaviorStore(redis));
  const inputs = { byActions: async (tenant: string, ids: string[]) => ids.flatMap((id) => committed.get(tenant)?.get(id) ?? []) };
  replay = new ReplayService(policies, inputs, {
    reveal: async (tenantId, stored) => {
      revealed.push(tenantId);
      return { params: { ...stored, email: 'jane@corp.example' }, erasedSubjects: [] };
    },
  });
});
afterAll(async () => {
  await db.destroy();
  redis.disconnect();
});

const call = (over: Partial<ToolCallFacts> = {}): ToolCallFacts => ({
  agentId: 'agent-1',
  agentType: 'assistant',
  agentVersion: '1.0.0',
  tool: 'svc_x',
  method: 'search',
  params: {},
  piiDetected: false,
  sessionId: '',
  ...over,
});

test('a tenant without a stored policy has the general template; pass 2 only when needed', async () => {
  const tenant = randomUUID();
  const ok = await evaluation.evaluate(tenant, randomUUID(), call());
  expect(ok).toMatchObject({ decision: 'allow', passes: 2, severity: 'none' });
  expect(ok.behavioral).toMatchObject({ action_count_24h: 1 });
  await policies.set(tenant, { template: 'crm' });
  const crm = await evaluation.evaluate(tenant, randomUUID(), call({ method: 'delete' }));
  expect(crm).toMatchObject({ decision: 'deny', passes: 1, violations: ['crm_delete_not_allowed'], behavioral: null });
  await policies.set(tenant, { template: 'data_access' });
  // pass 1 already denies: no enrichment
  expect(await evaluation.evaluate(tenant, randomUUID(), call({ params: { region: 'mars' } }))).toMatchObject({ decision: 'deny', passes: 1 });
});

test('revisions: content hashes; unchanged settings keep the revision; broken custom policy keeps the old one', async () => {
  const tenant = randomUUID();
  const r0 = (await policies.active(tenant)).revision;
  const r1 = (await policies.set(tenant, { configJson: '{"daily_action_limit": 10}' })).revision;
  expect(r1).not.toBe(r0);
  expect((await policies.set(tenant, { configJson: '{"daily_action_limit": 10}' })).revision).toBe(r1);
  await expect(policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\n\ndeny contains "x" if {\n' })).rejects.toBeInstanceOf(InputError);
  const unsafe = await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\ndeny contains "x" if no_such_rule\n' }).catch((e) => e);
  expect(unsafe).toBeInstanceOf(InputError);
  expect((unsafe as InputError).issues[0]).toMatchObject({ loc: ['custom_policy'], msg: expect.stringMatching(/^policy\.rego:3:\d+: rego_unsafe_var_error: /), type: 'rego_unsafe_var_error' });
  const still = await policies.active(tenant);
  expect(still).toMatchObject({ revision: r1, template: 'general' });
  const row = await db.selectFrom('policy_bundle_revisions').select(['revision']).where('tenant_id', '=', tenant).execute();
  expect(row.map((x) => x.revision).sort()).toEqual([r1].sort());
});

test('custom policy: free-text violations, evaluation errors deny', async () => {
  const tenant = randomUUID();
  await policies.set(tenant, {
    template: 'custom',
    customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains msg if {\n  input.params.amount > data.config.max\n  msg := sprintf("amount %v above %v", [input.params.amount, data.config.max])\n}\n\nconflict := 1 if input.method == "boom"\nconflict := 2 if input.method == "boom"\ndeny contains "c" if conflict\n',
    configJson: '{"max": 10}',
  });
  expect(await evaluation.evaluate(tenant, randomUUID(), call({ params: { amount: 11 } }))).toMatchObject({ decision: 'deny', violations: ['amount 11 above 10'], passes: 1 });
  expect(await evaluation.evaluate(tenant, randomUUID(), call({ params: { amount: 1 } }))).toMatchObject({ decision: 'allow', passes: 1 });
  expect(await evaluation.evaluate(tenant, randomUUID(), call({ method: 'boom' }))).toMatchObject({ decision: 'deny', violations: ['policy_evaluation_error'] });
});

test('a decision answers its replay input (stored params, never plaintext) and replays exactly, revealing PII through the vault', async () => {
  const tenant = randomUUID();
  const plaintext = { to: 'jane@corp.example', amount: 150 };
  const stored = { to: { $pii: 'envelope-ciphertext' }, amount: 150 };
  const id = randomUUID();
  await policies.set(tenant, { template: 'financial', configJson: JSON.stringify({ business_hours: { weekdays: [] } }) });
  const c = call({ params: plaintext, piiDetected: true });
  const first = await evaluation.evaluate(tenant, id, c);
  expect(first.violations).toEqual(['transaction_outside_business_hours']);
  // what the record lacks for the replay input: the verdict, the PII flag, the behavioral data, the passes, the time
  expect(first.facts).toMatchObject({ decision: 'allow', violations: ['transaction_outside_business_hours'], pii_detected: true, passes: first.passes });
  expect(Date.parse(first.facts.evaluated_at)).toBeGreaterThan(Date.now() - 60_000);
  // the counters at decision time are kept even when pass 2 did not read them (the call itself counted)
  expect(first.facts.behavioral).toMatchObject({ action_count_1h: 1, action_count_24h: 1, last_action_seconds_ago: -1 });
  expect(JSON.stringify(first.facts)).not.toContain('jane@corp.example');
  commit(tenant, id, c, first, stored);
  const input = committed.get(tenant)!.get(id)!;
  expect(input).toMatchObject({ action_id: id, decision: 'allow', bundle_revision: first.bundleRevision, passes: first.passes });
  expect(JSON.parse(input.call!.params!.text)).toEqual(stored);
  expect(input.call).toMatchObject({ agent_id: 'agent-1', tool: 'svc_x', method: 'search', pii_detected: true, session_id: '' });

  const [same] = await replay.replay(tenant, [id]);
  expect(same).toMatchObject({ found: true, original_decision: 'allow', replay_decision: 'allow', consistent: true, replay_violations: ['transaction_outside_business_hours'] });
  expect(revealed).toContain(tenant);
  await policies.set(tenant, { configJson: JSON.stringify({ approval_threshold: 100 }) });
  const [changed] = await replay.replay(tenant, [id]);
  expect(changed).toMatchObject({ original_decision: 'allow', replay_decision: 'requires_human', consistent: false });
  expect((await replay.replay(randomUUID(), [id]))[0].found).toBe(false);
});

test('replay reads the behavioral data of the decision from its input, not the counters of today', async () => {
  const tenant = randomUUID();
  const id = randomUUID();
  // a custom policy reading input.behavioral: deny from the third action of the hour
  const customPolicy = 'package agw.custom\nimport rego.v1\n\ndeny contains "burst" if input.behavioral.action_count_1h > 2\n';
  await policies.set(tenant, { template: 'custom', customPolicy });
  const r = await evaluation.evaluate(tenant, id, call());
  expect(r).toMatchObject({ decision: 'allow', passes: 2 });
  commit(tenant, id, call(), r);
  for (let i = 0; i < 3; i++) await evaluation.evaluate(tenant, randomUUID(), call());
  expect(await evaluation.evaluate(tenant, randomUUID(), call())).toMatchObject({ decision: 'deny', violations: ['burst'] });
  // the first decision saw one action in the hour; replayed under the same policy it is still allowed
  const [again] = await replay.replay(tenant, [id]);
  expect(again).toMatchObject({ found: true, original_decision: 'allow', replay_decision: 'allow', consistent: true });
});

test("pass 2's read records the call; the answer does not wait for a violation's count (a failed count is reported), whichever pass decided", async () => {
  const tenant = randomUUID();
  const failures: unknown[] = [];
  class WritesFail extends BehaviorStore {
    override async countViolation(): Promise<never> {
      throw new Error('violation count refused');
    }
  }
  const failing = new PolicyEvaluation(policies, new WritesFail(redis), () => undefined, (e) => failures.push(e));
  // a policy reading input.behavioral: pass 2 runs, and its one script call counts the call
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "burst" if input.behavioral.action_count_1h > 2\n' });
  for (let i = 1; i <= 2; i++) {
    const r = await failing.evaluate(tenant, randomUUID(), call());
    expect(r).toMatchObject({ decision: 'allow', passes: 2 });
    expect(r.facts.behavioral).toMatchObject({ action_count_1h: i });
  }
  await new Promise((r) => setImmediate(r));
  expect(failures).toHaveLength(0); // no violation: nothing else to write
  const third = await failing.evaluate(tenant, randomUUID(), call());
  expect(third).toMatchObject({ decision: 'deny', passes: 2, violations: ['burst'] });
  expect(third.facts.behavioral).toMatchObject({ action_count_1h: 3, violation_count_24h: 0 });
  await new Promise((r) => setImmediate(r));
  expect(failures).toHaveLength(1);
  expect(String(failures[0])).toContain('violation count refused');
  // a policy that never reads input.behavioral decides in pass 1: the call was recorded before it, and its
  // violation is counted off the answer's path as pass 2's is
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "no" if input.method == "never"\n' });
  const fourth = await failing.evaluate(tenant, randomUUID(), call({ method: 'never' }));
  expect(fourth).toMatchObject({ decision: 'deny', passes: 1, violations: ['no'] });
  expect(fourth.facts.behavioral).toMatchObject({ action_count_1h: 4, violation_count_24h: 0 });
  await new Promise((r) => setImmediate(r));
  expect(failures).toHaveLength(2);
  expect(String(failures[1])).toContain('violation count refused');
});

test('the record that every decision waits for: its failure is the call\'s, whichever pass decided', async () => {
  const tenant = randomUUID();
  class RecordFails extends BehaviorStore {
    override async recordForPass2(): Promise<never> {
      throw new Error('record refused');
    }
  }
  const failing = new PolicyEvaluation(policies, new RecordFails(redis));
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "no" if input.method == "never"\n' });
  await expect(failing.evaluate(tenant, randomUUID(), call())).rejects.toThrow('record refused');
  await expect(failing.evaluate(tenant, randomUUID(), call({ method: 'never' }))).rejects.toThrow('record refused');
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "burst" if input.behavioral.action_count_1h > 2\n' });
  await expect(failing.evaluate(tenant, randomUUID(), call())).rejects.toThrow('record refused');
});

test('the record is on its way to Redis before pass 1 is evaluated, whichever pass decides', async () => {
  const tenant = randomUUID();
  const seen: Array<{ pass: number; inFlight: number; recorded: boolean }> = [];
  let recorded = false;
  class Watched extends BehaviorStore {
    override async recordForPass2(...a: Parameters<BehaviorStore['recordForPass2']>) {
      recorded = true;
      return super.recordForPass2(...a);
    }
  }
  const watched = {
    active: async (t: string) => {
      const bundle = await policies.active(t);
      let pass = 0;
      // ioredis' commandQueue: the commands written to the socket and not answered yet
      return Object.assign(Object.create(bundle), {
        evaluate: (...a: Parameters<typeof bundle.evaluate>) => {
          seen.push({ pass: ++pass, inFlight: (redis as unknown as { commandQueue: { length: number } }).commandQueue.length, recorded });
          return bundle.evaluate(...a);
        },
      });
    },
  } as unknown as TenantPolicies;
  const ev = new PolicyEvaluation(watched, new Watched(redis));
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "no" if input.method == "never"\n' });
  expect(await ev.evaluate(tenant, randomUUID(), call())).toMatchObject({ decision: 'allow', passes: 1 });
  expect(seen).toEqual([{ pass: 1, inFlight: 1, recorded: true }]);
  seen.length = 0;
  recorded = false;
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "burst" if input.behavioral.action_count_1h > 5\n' });
  expect(await ev.evaluate(tenant, randomUUID(), call())).toMatchObject({ decision: 'allow', passes: 2 });
  expect(seen[0]).toEqual({ pass: 1, inFlight: 1, recorded: true });
});

test('a violation decided in pass 1 is counted: the next call of the agent sees it', async () => {
  const tenant = randomUUID();
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "no" if input.method == "never"\n' });
  expect(await evaluation.evaluate(tenant, randomUUID(), call({ method: 'never' }))).toMatchObject({ decision: 'deny', passes: 1 });
  const next = await evaluation.evaluate(tenant, randomUUID(), call());
  expect(next).toMatchObject({ decision: 'allow', passes: 1 });
  expect(next.facts.behavioral).toMatchObject({ action_count_1h: 2, violation_count_24h: 1 });
});

test('a violation decided in pass 2 is counted: the next call of the agent sees it', async () => {
  const tenant = randomUUID();
  await policies.set(tenant, { template: 'custom', customPolicy: 'package agw.custom\nimport rego.v1\n\ndeny contains "burst" if input.behavioral.action_count_1h > 1\n' });
  expect(await evaluation.evaluate(tenant, randomUUID(), call())).toMatchObject({ decision: 'allow', passes: 2 });
  expect(await evaluation.evaluate(tenant, randomUUID(), call())).toMatchObject({ decision: 'deny', passes: 2 });
  const next = await evaluation.evaluate(tenant, randomUUID(), call());
  expect(next.facts.behavioral).toMatchObject({ action_count_1h: 3, violation_count_24h: 1 });
});
