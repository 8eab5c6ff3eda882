/**
 * E2E: policy settings through the public API: templates and rules endpoints, overrides, custom Rego
 * (refused with file:line:col when broken, the old policy staying in force), bundle revisions on audit
 * records, replay after a policy change, gateway constraints, agent behavior endpoints and the metric.
 */
import { randomUUID } from 'node:crypto';
import { type Tenant, api, call, patientTenant } from './support/api';

jest.setTimeout(180_000);

const patch = (t: Tenant, body: Record<string, unknown>) => api('PATCH', '/dashboard/settings', { key: t.apiKey, body });

async function auditRecord(key: string, actionId: string) {
  const r = await api('GET', '/audit/log?limit=1000', { key });
  return r.body.records.find((x: { action_id: string }) => x.action_id === actionId);
}

describe('templates and rules', () => {
  test('GET /policy/templates lists the five templates with the spec defaults and types', async () => {
    const t = await patientTenant('Policy');
    const r = await api('GET', '/policy/templates', { key: t.apiKey });
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.body.templates.map((x: any) => [x.name, Object.fromEntries(x.parameters.map((p: any) => [p.name, p]))]));
    expect(Object.keys(byName).sort()).toEqual(['crm', 'data_access', 'email', 'financial', 'general']);
    const defaults = (name: string) => Object.fromEntries(Object.entries(byName[name]).map(([k, p]: [string, any]) => [k, p.default]));
    expect(defaults('general')).toEqual({ daily_action_limit: 200, anomaly_threshold: 0.7, cooldown_violations: 3, approve_destructive: true });
    expect(defaults('financial')).toMatchObject({ transaction_limit: 5000, currency: 'EUR', business_hours_only: true, approval_threshold: 1000, daily_transaction_cap: 100 });
    expect(defaults('email')).toMatchObject({ daily_send_limit: 50, require_disclosure: true, first_contact_approval: true });
    expect(defaults('crm')).toEqual({ bulk_threshold: 10, allow_delete: false, export_approval: true, restricted_fields: ['owner', 'revenue'] });
    expect(defaults('data_access')).toMatchObject({ max_row_limit: 10000, pii_allowed: false, allowed_regions: ['eu-west-1'], require_masking: true, daily_query_limit: 500 });
    expect(byName.general.daily_action_limit.type).toBe('integer');
    expect(byName.general.anomaly_threshold.type).toBe('number');
    expect(byName.crm.restricted_fields.type).toBe('string[]');
  });

  test("GET /policy/rules gives the tenant's active rules with id, trigger and severity", async () => {
    const t = await patientTenant('Policy');
    const general = await api('GET', '/policy/rules', { key: t.apiKey });
    expect(general.status).toBe(200);
    expect(general.body.policy_template).toBe('general');
    const sev = (rules: any[]) => Object.fromEntries(rules.filter((r) => r.kind === 'violation').map((r) => [r.id, r.severity]));
    expect(sev(general.body.rules)).toEqual({ anomaly_score_threshold_exceeded: 'high', daily_action_limit_exceeded: 'medium', violation_cooldown_active: 'high' });
    expect(general.body.rules.every((r: any) => typeof r.trigger === 'string' && r.trigger.length > 0)).toBe(true);
    expect((await patch(t, { policy_template: 'data_access' })).status).toBe(200);
    const da = await api('GET', '/policy/rules', { key: t.apiKey });
    expect(sev(da.body.rules)).toEqual({
      pii_access_denied: 'high',
      pii_masking_required: 'high',
      query_row_limit_exceeded: 'medium',
      data_residency_violation: 'high',
      daily_query_limit_exceeded: 'medium',
    });
  });

  test('the OpenAPI description documents the policy endpoints', async () => {
    const r = await api('GET', '/openapi.json');
    expect(r.status).toBe(200);
    for (const p of ['/policy/templates', '/policy/rules', '/bundles/gateway/status', '/audit/replay', '/audit/replay-bulk', '/agents/{agent_id}/anomaly_score']) expect(r.body.paths[p]).toBeDefined();
  });
});

describe('settings, overrides and bundle revisions', () => {
  test('policy_config is validated against the template parameters', async () => {
    const t = await patientTenant('Policy');
    const r = await patch(t, { policy_template: 'financial', policy_config: { transaction_limit: 'lots', unknown_knob: 1 } });
    expect(r.status).toBe(422);
    const locs = r.body.detail.map((d: any) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.policy_config.transaction_limit', 'body.policy_config.unknown_knob']));
    expect((await api('GET', '/dashboard/settings', { key: t.apiKey })).body.policy_template).toBe('general');
  });

  test('overrides merge over defaults; every change makes a new revision that audit records carry', async () => {
    const t = await patientTenant('Policy');
    const s0 = await api('GET', '/bundles/gateway/status', { key: t.apiKey });
    expect(s0.status).toBe(200);
    expect(s0.body.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(s0.body.policy_template).toBe('general');
    const a0 = await call(t.apiKey);
    expect((await auditRecord(t.apiKey, a0.body.action_id)).bundle_revision).toBe(s0.body.revision);

    const r1 = await patch(t, { policy_config: { daily_action_limit: 5 } });
    expect(r1.status).toBe(200);
    expect(r1.body.policy_config).toEqual({ daily_action_limit: 5, anomaly_threshold: 0.7, cooldown_violations: 3, approve_destructive: true });
    const s1 = await api('GET', '/bundles/gateway/status', { key: t.apiKey });
    expect(s1.body.revision).not.toBe(s0.body.revision);
    expect(r1.body.bundle_revision).toBe(s1.body.revision);
    const a1 = await call(t.apiKey);
    expect((await auditRecord(t.apiKey, a1.body.action_id)).bundle_revision).toBe(s1.body.revision);

    // the same settings again: no new revision; a second key keeps the first override
    await patch(t, { policy_config: { daily_action_limit: 5 } });
    expect((await api('GET', '/bundles/gateway/status', { key: t.apiKey })).body.revision).toBe(s1.body.revision);
    const r2 = await patch(t, { policy_config: { anomaly_threshold: 0.9 } });
    expect(r2.body.policy_config).toMatchObject({ daily_action_limit: 5, anomaly_threshold: 0.9 });
    const s3 = await patch(t, { policy_template: 'crm' });
    expect(s3.body.policy_template).toBe('crm');
    expect(s3.body.bundle_revision).not.toBe(r2.body.bundle_revision);
  });

  test('a custom policy whose tests fail is refused (422 naming the failing test); the old policy stays; passing tests activate it', async () => {
    const t = await patientTenant('Policy');
    const before = await api('GET', '/bundles/gateway/status', { key: t.apiKey });
    const source = (limit: number) =>
      `package agw.custom\n\nimport rego.v1\n\ndeny contains "too much" if input.params.amount > ${limit}\n\ntest_small_allowed if {\n\tcount(deny) == 0 with input as {"params": {"amount": 50}}\n}\n\ntest_large_denied if {\n\t"too much" in deny with input as {"params": {"amount": 500}}\n}\n`;
    const r = await patch(t, { policy_template: 'custom', custom_policy: source(1000) });
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual([
      { loc: ['body', 'custom_policy'], type: 'policy_test_failed', msg: 'policy.rego:11: data.agw.custom.test_large_denied: FAIL: a custom policy whose tests fail cannot be activated' },
    ]);
    expect((await api('GET', '/bundles/gateway/status', { key: t.apiKey })).body.revision).toBe(before.body.revision);
    const ok = await patch(t, { policy_template: 'custom', custom_policy: source(100) });
    expect(ok.status).toBe(200);
    expect(ok.body.custom_policy).toBe(source(100));
  });

  test('POST /policy/test runs a candidate\'s tests with coverage and saves nothing', async () => {
    const t = await patientTenant('Policy');
    const before = await api('GET', '/bundles/gateway/status', { key: t.apiKey });
    const policy = `package agw.custom\n\nimport rego.v1\n\ndeny contains "too much" if input.params.amount > 100\n\nwarn contains "no reason" if not input.params.reason\n\ntest_large_denied if {\n\t"too much" in deny with input as {"params": {"amount": 500, "reason": "x"}}\n}\n\ntest_wrong if {\n\tcount(deny) == 0 with input as {"params": {"amount": 500}}\n}\n`;
    const r = await api('POST', '/policy/test', { key: t.apiKey, body: { policy } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ passed: 1, failed: 1, errored: 0 });
    expect(r.body.results.map((x: { name: string; outcome: string; row: number }) => [x.name, x.outcome, x.row])).toEqual([
      ['data.agw.custom.test_large_denied', 'pass', 9],
      ['data.agw.custom.test_wrong', 'fail', 13],
    ]);
    // coverable: 5 (deny: head and expression on one line), 7 (warn); warn is never evaluated by the tests
    expect(r.body.coverage).toEqual({ percent: 50, covered_lines: 1, coverable_lines: 2, files: [{ file: 'policy.rego', percent: 50, not_covered: [{ start: 7, end: 7 }] }] });
    const broken = await api('POST', '/policy/test', { key: t.apiKey, body: { policy: 'package agw.custom\n\ntest_x if {\n' } });
    expect(broken.status).toBe(422);
    expect(broken.body.detail[0]).toMatchObject({ loc: ['body', 'policy'], type: 'rego_parse_error' });
    expect((await api('POST', '/policy/test', { key: t.apiKey, body: {} })).status).toBe(422);
    expect((await api('GET', '/bundles/gateway/status', { key: t.apiKey })).body.revision).toBe(before.body.revision);
  });

  test('a custom policy that does not compile is refused with file, line and column; the old policy stays', async () => {
    const t = await patientTenant('Policy');
    const before = await api('GET', '/bundles/gateway/status', { key: t.apiKey });
    const broken = 'package agw.custom\n\nimport rego.v1\n\ndeny contains "x" if {\n  input.method ==\n}\n';
    const r = await patch(t, { policy_template: 'custom', custom_policy: broken });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(['body', 'custom_policy']);
    expect(r.body.detail[0].msg).toMatch(/^policy\.rego:\d+:\d+: rego_parse_error: /);
    expect(r.body.detail[0].type).toBe('rego_parse_error');
    const undefinedRef = await patch(t, { policy_template: 'custom', custom_policy: 'package agw.custom\n\nimport rego.v1\n\ndeny contains "x" if no_such_rule\n' });
    expect(undefinedRef.status).toBe(422);
    expect(undefinedRef.body.detail[0].msg).toMatch(/^policy\.rego:5:\d+: /);
    const wrongPackage = await patch(t, { policy_template: 'custom', custom_policy: 'package acme\n\nimport rego.v1\n\ndeny contains "x" if true\n' });
    expect(wrongPackage.status).toBe(422);
    expect(wrongPackage.body.detail[0].msg).toContain('package agw.custom');
    const missing = await patch(t, { policy_template: 'custom' });
    expect(missing.status).toBe(422);
    const after = await api('GET', '/bundles/gateway/status', { key: t.apiKey });
    expect(after.body.revision).toBe(before.body.revision);
    expect(after.body.policy_template).toBe('general');
    expect((await call(t.apiKey, { method: 'delete' })).status).toBe(202);
  });

  test('a custom policy decides with free-text violations, warnings, approvals and behavioral data', async () => {
    const t = await patientTenant('Policy');
    const source = [
      'package agw.custom',
      '',
      'import rego.v1',
      '',
      'deny contains "Refunds above 100 EUR need a manager" if {',
      '  input.method == "refund"',
      '  input.params.amount > 100',
      '}',
      '',
      'warn contains "Refund without a reason" if {',
      '  input.method == "refund"',
      '  not input.params.reason',
      '}',
      '',
      'approval contains "Closing an account needs a human" if input.method == "close_account"',
      '',
      'deny contains sprintf("More than %d calls in 24 hours", [data.config.max_calls]) if input.behavioral.action_count_24h > data.config.max_calls',
      '',
    ].join('\n');
    const r = await patch(t, { policy_template: 'custom', custom_policy: source, policy_config: { max_calls: 4 } });
    expect(r.status).toBe(200);
    expect(r.body.policy_template).toBe('custom');
    expect(r.body.custom_policy).toBe(source);
    const denied = await call(t.apiKey, { method: 'refund', params: { amount: 150, reason: 'broken' } });
    expect(denied.status).toBe(403);
    expect(denied.body.detail.violations).toEqual(['Refunds above 100 EUR need a manager']);
    expect(denied.body.detail.severity).toBe('high');
    const warned = await call(t.apiKey, { method: 'refund', params: { amount: 20 } });
    expect(warned.status).toBe(200);
    expect(warned.body.violations).toEqual(['Refund without a reason']);
    expect(warned.body.severity).toBe('medium');
    expect((await call(t.apiKey, { method: 'close_account', params: {} })).status).toBe(202);
    // pass 2 with behavioral data: the 5th call of the agent in 24 h is denied
    const rules = await api('GET', '/policy/rules', { key: t.apiKey });
    expect(rules.body.policy_template).toBe('custom');
    expect((await call(t.apiKey, { method: 'search' })).status).toBe(200); // 4th call: 4 is not more than 4
    const fifth = await call(t.apiKey, { method: 'search' });
    expect(fifth.status).toBe(403);
    expect(fifth.body.detail.violations).toEqual(['More than 4 calls in 24 hours']);
    expect((await auditRecord(t.apiKey, fifth.body.detail.action_id)).details.passes).toBe(2);
  });
});

describe('replay', () => {
  test('replay reports consistent decisions, then a changed decision after a policy change', async () => {
    const t = await patientTenant('Policy');
    const del = await call(t.apiKey, { agent_id: 'replayer', method: 'delete', params: { id: 7 } });
    const ok = await call(t.apiKey, { agent_id: 'replayer' });
    expect(del.status).toBe(202);
    expect(ok.status).toBe(200);
    const same = await api('POST', '/audit/replay', { key: t.apiKey, body: { action_id: del.body.action_id } });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ action_id: del.body.action_id, original_decision: 'requires_human', replay_decision: 'requires_human', consistent: true });

    expect((await patch(t, { policy_config: { approve_destructive: false } })).status).toBe(200);
    const changed = await api('POST', '/audit/replay', { key: t.apiKey, body: { action_id: del.body.action_id } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ original_decision: 'requires_human', replay_decision: 'allow', consistent: false });
    expect(changed.body.replay_bundle_revision).not.toBe(changed.body.original_bundle_revision);

    const unknown = randomUUID();
    const bulk = await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: [del.body.action_id, ok.body.action_id, unknown] } });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ total: 3, replayed: 2, consistent_count: 1, changed_count: 1, not_found: [unknown] });
    const byId = Object.fromEntries(bulk.body.results.map((x: any) => [x.action_id, x]));
    expect(byId[ok.body.action_id]).toMatchObject({ original_decision: 'allow', replay_decision: 'allow', consistent: true });

    const other = await patientTenant('Policy');
    expect((await api('POST', '/audit/replay', { key: other.apiKey, body: { action_id: del.body.action_id } })).status).toBe(404);
    const bad = await api('POST', '/audit/replay', { key: t.apiKey, body: { action_id: 'not-a-uuid' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'action_id']);
    expect((await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: [] } })).status).toBe(422);
  });

  test('replays under a candidate policy before it is saved: what would change, the active policy untouched', async () => {
    const t = await patientTenant('Policy');
    const del = await call(t.apiKey, { agent_id: 'candidate', method: 'delete', params: { id: 7 } });
    const ok = await call(t.apiKey, { agent_id: 'candidate' });
    expect([del.status, ok.status]).toEqual([202, 200]);
    const before = (await api('GET', '/dashboard/settings', { key: t.apiKey })).body;
    const ids = [del.body.action_id, ok.body.action_id];

    const tried = await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: ids, candidate: { policy_config: { approve_destructive: false } } } });
    expect(tried.status).toBe(200);
    expect(tried.body).toMatchObject({ replayed: 2, changed_count: 1, consistent_count: 1 });
    const byId = Object.fromEntries(tried.body.results.map((x: any) => [x.action_id, x]));
    expect(byId[del.body.action_id]).toMatchObject({ original_decision: 'requires_human', replay_decision: 'allow', consistent: false });
    expect(byId[del.body.action_id].replay_bundle_revision).not.toBe(before.bundle_revision);

    // nothing was saved: the active policy, its revision and the next call are as before
    const after = (await api('GET', '/dashboard/settings', { key: t.apiKey })).body;
    expect([after.bundle_revision, after.policy_config.approve_destructive]).toEqual([before.bundle_revision, before.policy_config.approve_destructive]);
    expect((await call(t.apiKey, { agent_id: 'candidate', method: 'delete', params: { id: 8 } })).status).toBe(202);
    expect((await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: ids } })).body.changed_count).toBe(0);

    // a candidate is checked as a save would be: Rego that does not compile is a 422 at its line
    const bad = await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: ids, candidate: { policy_template: 'custom', custom_policy: 'package agw.custom\n\ndeny contains "x" if {\n' } } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.detail)).toMatch(/custom_policy/);
    const unknownField = await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: ids, candidate: { webhook_url: 'https://x.example' } } });
    expect(unknownField.status).toBe(422);
  });

  test('replay uses the behavioral data and time of the original decision', async () => {
    const t = await patientTenant('Policy');
    expect((await patch(t, { policy_config: { daily_action_limit: 1, cooldown_violations: 1000, anomaly_threshold: 1 } })).status).toBe(200);
    const first = await call(t.apiKey, { agent_id: 'counted' });
    const second = await call(t.apiKey, { agent_id: 'counted' });
    expect(second.body.violations).toEqual(['daily_action_limit_exceeded']);
    for (let i = 0; i < 3; i++) await call(t.apiKey, { agent_id: 'counted' });
    // the counters moved on, but each replay sees the counts of its own decision
    const bulk = await api('POST', '/audit/replay-bulk', { key: t.apiKey, body: { action_ids: [first.body.action_id, second.body.action_id] } });
    const byId = Object.fromEntries(bulk.body.results.map((x: any) => [x.action_id, x]));
    expect(byId[first.body.action_id].replay_violations).toEqual([]);
    expect(byId[second.body.action_id].replay_violations).toEqual(['daily_action_limit_exceeded']);
    expect(bulk.body.changed_count).toBe(0);
  });
});

describe('replay of actions with personal data', () => {
  test('stored params hold ciphertext only; replay decrypts them through the vault, and reports erased subjects after crypto-shredding', async () => {
    const t = await patientTenant('Policy');
    const source = 'package agw.custom\n\nimport rego.v1\n\ndeny contains "Jane is off limits" if contains(input.params.where.email, "jane.doe")\n';
    expect((await patch(t, { policy_template: 'custom', custom_policy: source })).status).toBe(200);
    const r = await call(t.apiKey, { tool: 'svc_read_database', method: 'query', params: { table: 'customers', where: { email: 'jane.doe@corp.example' } } });
    expect(r.status).toBe(403);
    expect(r.body.detail.violations).toEqual(['Jane is off limits']);
    const rec = await auditRecord(t.apiKey, r.body.detail.action_id);
    expect(JSON.stringify(rec.params)).not.toContain('jane.doe@corp.example');
    expect(rec.details.pii_detected).toBe(true);
    const replay = await api('POST', '/audit/replay', { key: t.apiKey, body: { action_id: r.body.detail.action_id } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ original_decision: 'deny', replay_decision: 'deny', consistent: true, replay_violations: ['Jane is off limits'] });

    // after crypto-shredding the subject, replay sees "[erased]" and says so
    const subject = await api('POST', '/audit/subjects/lookup', { key: t.apiKey, body: { identifier: 'jane.doe@corp.example' } });
    expect(subject.status).toBe(200);
    expect(subject.body.known).toBe(true);
    expect((await api('POST', `/audit/erase/${subject.body.subject_id}`, { key: t.apiKey })).status).toBe(200);
    const afterErase = await api('POST', '/audit/replay', { key: t.apiKey, body: { action_id: r.body.detail.action_id } });
    expect(afterErase.status).toBe(200);
    expect(afterErase.body).toMatchObject({ original_decision: 'deny', replay_decision: 'allow', consistent: false, erased_subjects: [subject.body.subject_id] });
  });
});

describe('gateway constraints (step 2, before any policy)', () => {
  test('blocked domains in any URL or e-mail address in params are a 403 with their own violation id', async () => {
    const t = await patientTenant('Policy');
    const s = await patch(t, { gateway_constraints: { blocked_domains: ['evil.example', 'Mailinator.com'] } });
    expect(s.status).toBe(200);
    expect(s.body.gateway_constraints.blocked_domains).toEqual(['evil.example', 'mailinator.com']);
    for (const params of [{ url: 'https://evil.example/x' }, { nested: { list: ['see http://api.evil.example:8443/path'] } }, { to: 'bob@mailinator.com' }]) {
      const r = await call(t.apiKey, { params });
      expect(r.status).toBe(403);
      expect(r.body.detail).toMatchObject({ violations: ['gateway_blocked_domain'], severity: 'high' });
      const rec = await auditRecord(t.apiKey, r.body.detail.action_id);
      expect(rec).toMatchObject({ decision: 'deny', violations: ['gateway_blocked_domain'], bundle_revision: 'gateway-constraints' });
    }
    expect((await call(t.apiKey, { params: { url: 'https://notevil.example/' } })).status).toBe(200);
    // a blocked domain is refused even for a call the policy would queue
    expect((await call(t.apiKey, { method: 'delete', params: { url: 'https://evil.example' } })).status).toBe(403);
  });

  test('daily caps per agent and per tool', async () => {
    const t = await patientTenant('Policy');
    expect((await patch(t, { gateway_constraints: { daily_caps: { actions_per_agent: 3, per_tool: { svc_payments: 1 } } } })).status).toBe(200);
    expect((await call(t.apiKey, { agent_id: 'capped', tool: 'svc_payments' })).status).toBe(200);
    const perTool = await call(t.apiKey, { agent_id: 'capped', tool: 'svc_payments' });
    expect(perTool.status).toBe(403);
    expect(perTool.body.detail.violations).toEqual(['gateway_daily_cap_exceeded']);
    expect((await call(t.apiKey, { agent_id: 'capped' })).status).toBe(200);
    expect((await call(t.apiKey, { agent_id: 'capped' })).status).toBe(200);
    const over = await call(t.apiKey, { agent_id: 'capped' });
    expect(over.status).toBe(403);
    expect(over.body.detail.violations).toEqual(['gateway_daily_cap_exceeded']);
    expect((await call(t.apiKey, { agent_id: 'another' })).status).toBe(200);
  });

  test('cooldown after repeated violations', async () => {
    const t = await patientTenant('Policy');
    expect((await patch(t, { policy_template: 'crm', gateway_constraints: { cooldown: { violations: 2, window_seconds: 600, cooldown_seconds: 300 } } })).status).toBe(200);
    const crm = (method: string) => ({ agent_id: 'hothead', tool: 'svc_crm', method, params: { id: 1 } });
    expect((await call(t.apiKey, crm('delete'))).status).toBe(403);
    expect((await call(t.apiKey, crm('delete'))).status).toBe(403);
    const cooled = await call(t.apiKey, crm('get'));
    expect(cooled.status).toBe(403);
    expect(cooled.body.detail.violations).toEqual(['gateway_cooldown_active']);
    expect((await call(t.apiKey, { ...crm('get'), agent_id: 'calm' })).status).toBe(200);
  });

  test('gateway_constraints is validated', async () => {
    const t = await patientTenant('Policy');
    const r = await patch(t, { gateway_constraints: { blocked_domains: ['not a domain'], daily_caps: { actions_per_agent: 0 }, surprise: true } });
    expect(r.status).toBe(422);
    expect(r.body.detail.every((d: any) => d.loc[0] === 'body' && d.loc[1] === 'gateway_constraints')).toBe(true);
  });
});

describe('agent behavior endpoints', () => {
  test('anomaly score, clearing counters (keeps the score) and history (resets it)', async () => {
    const t = await patientTenant('Policy');
    expect((await patch(t, { policy_config: { daily_action_limit: 1, cooldown_violations: 1000, anomaly_threshold: 1 } })).status).toBe(200);
    for (let i = 0; i < 3; i++) await call(t.apiKey, { agent_id: 'tracked' });
    const before = await api('GET', '/agents/tracked/anomaly_score', { key: t.apiKey });
    expect(before.status).toBe(200);
    expect(before.body.agent_id).toBe('tracked');
    expect(before.body.anomaly_score).toBeGreaterThan(0);
    expect(before.body.anomaly_score).toBeLessThanOrEqual(1);
    expect(before.body.factors).toMatchObject({ action_count_24h: 3, violation_count_24h: 2 });

    const counters = await api('DELETE', '/agents/tracked/counters', { key: t.apiKey });
    expect(counters.status).toBe(200);
    expect(counters.body).toMatchObject({ agent_id: 'tracked', cleared: true, anomaly_score_kept: true });
    expect((await api('GET', '/agents/tracked/anomaly_score', { key: t.apiKey })).body.anomaly_score).toBe(before.body.anomaly_score);
    const fresh = await call(t.apiKey, { agent_id: 'tracked' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.violations).toBeUndefined();

    expect((await api('DELETE', '/agents/tracked/history', { key: t.apiKey })).status).toBe(200);
    expect((await api('GET', '/agents/tracked/anomaly_score', { key: t.apiKey })).body.anomaly_score).toBe(0);
    expect((await api('GET', '/agents/bad%20id/anomaly_score', { key: t.apiKey })).status).toBe(404);
    // another tenant's agent of the same name is a different agent
    const other = await patientTenant('Policy');
    expect((await api('GET', '/agents/tracked/anomaly_score', { key: other.apiKey })).body.anomaly_score).toBe(0);
  });

  test("the gateway's metrics report the policy service's median evaluation time", async () => {
    const t = await patientTenant('Policy');
    await call(t.apiKey);
    const r = await api('GET', '/metrics');
    expect(r.status).toBe(200);
    const m = /agw_policy_eval_ms\{[^}]*quantile="0\.5"[^}]*\} ([0-9.e+-]+)/.exec(r.body);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(0);
  });
});
