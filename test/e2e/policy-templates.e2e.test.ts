/**
 * E2E: every rule and every approval rule of the five templates (spec: "Template rules"), driven by real
 * tool calls through the public API; overrides change outcomes; behavioral rules use the real counters.
 */
import { type Tenant, api, call, patientTenant } from './support/api';

jest.setTimeout(180_000);

async function tenantWith(settings: Record<string, unknown>): Promise<Tenant> {
  const t = await patientTenant('Policy Templates');
  const r = await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: settings });
  expect(r.status).toBe(200);
  return t;
}

async function auditRecord(key: string, actionId: string) {
  const r = await api('GET', '/audit/log?limit=1000', { key });
  expect(r.status).toBe(200);
  return r.body.records.find((x: { action_id: string }) => x.action_id === actionId);
}

function expectDenied(r: { status: number; body: any }, violation: string) {
  expect(r.status).toBe(403);
  expect(r.body.detail.violations).toContain(violation);
  expect(r.body.detail.severity).toBe('high');
  expect(r.body.detail.alert_tier).toBe('escalate'); // the audit record keeps the template's P-tier
  expect(r.body.detail.action_id).toEqual(expect.any(String));
}

function expectMedium(r: { status: number; body: any }, violation: string) {
  expect(r.status).toBe(200);
  expect(r.body.status).toBe('allowed');
  expect(r.body.violations).toEqual([violation]);
  expect(r.body.severity).toBe('medium');
}

async function expectApproval(key: string, r: { status: number; body: any }, violation: string) {
  expect(r.status).toBe(202);
  expect(r.body.status).toBe('pending_approval');
  const rec = await auditRecord(key, r.body.action_id);
  expect(rec.decision).toBe('requires_human');
  expect(rec.violations).toContain(violation);
  expect(rec.requires_human).toBe(true);
  const q = await api('GET', '/approvals', { key });
  const item = q.body.pending.find((p: { action_id: string }) => p.action_id === r.body.action_id);
  expect(item.opa_result.requires_human).toBe(true);
  expect(item.opa_result.violations).toContain(violation);
}

function expectClean(r: { status: number; body: any }) {
  expect(r.status).toBe(200);
  expect(r.body.status).toBe('allowed');
  expect(r.body.violations).toBeUndefined();
}

describe('general template (default for new tenants)', () => {
  test('a benign call is allowed; destructive methods need approval; approve_destructive=false allows them', async () => {
    const t = await patientTenant('General');
    expectClean(await call(t.apiKey));
    for (const method of ['delete', 'destroy', 'purge', 'drop']) {
      const r = await call(t.apiKey, { agent_id: `destructive-${method}`, method });
      await expectApproval(t.apiKey, r, 'destructive_action_requires_approval');
      expect((await auditRecord(t.apiKey, r.body.action_id)).severity).toBe('low');
    }
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_config: { approve_destructive: false } } })).status).toBe(200);
    expectClean(await call(t.apiKey, { agent_id: 'destructive-off', method: 'delete' }));
  });

  test('daily_action_limit_exceeded (medium) once the 24h count passes the limit', async () => {
    const t = await tenantWith({ policy_config: { daily_action_limit: 2, cooldown_violations: 1000, anomaly_threshold: 1 } });
    expectClean(await call(t.apiKey, { agent_id: 'limited' }));
    expectClean(await call(t.apiKey, { agent_id: 'limited' }));
    const third = await call(t.apiKey, { agent_id: 'limited' });
    expectMedium(third, 'daily_action_limit_exceeded');
    const rec = await auditRecord(t.apiKey, third.body.action_id);
    expect(rec.decision).toBe('allow');
    expect(rec.violations).toEqual(['daily_action_limit_exceeded']);
    expect(rec.severity).toBe('medium');
    // another agent of the same tenant has its own counters
    expectClean(await call(t.apiKey, { agent_id: 'other-agent' }));
  });

  test('violation_cooldown_active (high) after cooldown_violations violations in 24h', async () => {
    const t = await tenantWith({ policy_config: { daily_action_limit: 1, cooldown_violations: 3, anomaly_threshold: 1 } });
    expectClean(await call(t.apiKey, { agent_id: 'repeat-offender' }));
    for (let i = 0; i < 3; i++) expectMedium(await call(t.apiKey, { agent_id: 'repeat-offender' }), 'daily_action_limit_exceeded');
    expectDenied(await call(t.apiKey, { agent_id: 'repeat-offender' }), 'violation_cooldown_active');
  });

  test('anomaly_score_threshold_exceeded (high) once the agent anomaly score passes the threshold', async () => {
    const t = await tenantWith({ policy_config: { daily_action_limit: 1, cooldown_violations: 1000, anomaly_threshold: 0.5 } });
    const agent = 'anomalous';
    for (let i = 0; i < 4; i++) expect((await call(t.apiKey, { agent_id: agent })).status).toBe(200);
    // 4 actions, 3 of them with a violation: violation_ratio 3/5 = 0.6, score 1 - (1 - 0.9*0.6) = 0.54
    const score = await api('GET', `/agents/${agent}/anomaly_score`, { key: t.apiKey });
    expect(score.status).toBe(200);
    expect(score.body.anomaly_score).toBeCloseTo(0.54, 4);
    expect(score.body.factors.violation_ratio).toBeCloseTo(0.6, 4);
    expectDenied(await call(t.apiKey, { agent_id: agent }), 'anomaly_score_threshold_exceeded');
  });
});

describe('financial template', () => {
  const always = { timezone: 'UTC', start_hour: 0, end_hour: 24, weekdays: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] };
  const pay = (params: Record<string, unknown>, agent = 'payer') => ({ agent_id: agent, tool: 'svc_payments', method: 'transfer', params });

  test('limit, currency, approval threshold; overrides move the thresholds', async () => {
    const t = await tenantWith({ policy_template: 'financial', policy_config: { business_hours: always } });
    expectClean(await call(t.apiKey, pay({ amount: 100, currency: 'EUR' })));
    expectDenied(await call(t.apiKey, pay({ amount: 5000, currency: 'EUR' })), 'transaction_exceeds_limit');
    expectMedium(await call(t.apiKey, pay({ amount: 10, currency: 'USD' })), 'currency_mismatch');
    await expectApproval(t.apiKey, await call(t.apiKey, pay({ amount: 1000, currency: 'EUR' })), 'high_value_transaction_unapproved');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_config: { approval_threshold: 2000, transaction_limit: 10000, currency: 'USD' } } })).status).toBe(200);
    expectClean(await call(t.apiKey, pay({ amount: 1000, currency: 'USD' })));
    await expectApproval(t.apiKey, await call(t.apiKey, pay({ amount: 6000, currency: 'USD' })), 'high_value_transaction_unapproved');
  });

  test('transaction_outside_business_hours (medium) for amounts of 100 or more', async () => {
    const never = { ...always, weekdays: [] };
    const t = await tenantWith({ policy_template: 'financial', policy_config: { business_hours: never } });
    expectMedium(await call(t.apiKey, pay({ amount: 150, currency: 'EUR' })), 'transaction_outside_business_hours');
    expectClean(await call(t.apiKey, pay({ amount: 50, currency: 'EUR' })));
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_config: { business_hours_only: false } } })).status).toBe(200);
    expectClean(await call(t.apiKey, pay({ amount: 150, currency: 'EUR' })));
  });

  test('daily_transaction_cap_exceeded (medium)', async () => {
    const t = await tenantWith({ policy_template: 'financial', policy_config: { business_hours: always, daily_transaction_cap: 2 } });
    expectClean(await call(t.apiKey, pay({ amount: 10, currency: 'EUR' }, 'capped')));
    expectClean(await call(t.apiKey, pay({ amount: 10, currency: 'EUR' }, 'capped')));
    expectMedium(await call(t.apiKey, pay({ amount: 10, currency: 'EUR' }, 'capped')), 'daily_transaction_cap_exceeded');
  });
});

describe('email template', () => {
  const send = (params: Record<string, unknown>, agent = 'mailer') => ({ agent_id: agent, tool: 'svc_send_email', method: 'send', params });
  const ok = { to: 'partner@corp.example', subject: 'Hi', body: 'This message is AI-generated.', prior_contact_exists: true };

  test('blocked consumer domains, disclosure, first contact approval', async () => {
    const t = await tenantWith({ policy_template: 'email' });
    expectClean(await call(t.apiKey, send(ok)));
    for (const to of ['jane@gmail.com', 'Joe <joe@Yahoo.com>', 'x@protonmail.com']) expectDenied(await call(t.apiKey, send({ ...ok, to })), 'consumer_email_blocked');
    expectDenied(await call(t.apiKey, send({ ...ok, to: ['partner@corp.example'], cc: ['someone@hotmail.com'] })), 'consumer_email_blocked');
    expectMedium(await call(t.apiKey, send({ ...ok, body: 'Hello, see attached.' })), 'missing_ai_disclosure');
    expectClean(await call(t.apiKey, send({ ...ok, body: 'This is an automated notice.' })));
    await expectApproval(t.apiKey, await call(t.apiKey, send({ to: 'new@corp.example', body: 'AI-generated intro' })), 'first_contact_requires_approval');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_config: { first_contact_approval: false, require_disclosure: false, blocked_domains: ['corp.example'] } } })).status).toBe(200);
    expectClean(await call(t.apiKey, send({ to: 'jane@gmail.com', body: 'hello' })));
    expectDenied(await call(t.apiKey, send(ok)), 'consumer_email_blocked');
  });

  test('daily_send_limit_exceeded (medium); the default blocked_domains are eight consumer providers', async () => {
    const t = await tenantWith({ policy_template: 'email', policy_config: { daily_send_limit: 1 } });
    expectClean(await call(t.apiKey, send(ok, 'bulk-mailer')));
    expectMedium(await call(t.apiKey, send(ok, 'bulk-mailer')), 'daily_send_limit_exceeded');
    const templates = await api('GET', '/policy/templates', { key: t.apiKey });
    const email = templates.body.templates.find((x: { name: string }) => x.name === 'email');
    const blocked = email.parameters.find((p: { name: string }) => p.name === 'blocked_domains');
    expect(blocked.type).toBe('string[]');
    expect(blocked.default).toHaveLength(8);
    expect(blocked.default).toEqual(expect.arrayContaining(['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com']));
  });
});

describe('crm template', () => {
  const crm = (method: string, params: Record<string, unknown>) => ({ agent_id: 'crm-agent', tool: 'svc_crm', method, params });
  const eleven = Array.from({ length: 11 }, (_, i) => ({ id: i, stage: 'won' }));

  test('deletes, restricted fields, bulk operations, exports', async () => {
    const t = await tenantWith({ policy_template: 'crm' });
    expectClean(await call(t.apiKey, crm('update', { id: 1, fields: { stage: 'won' } })));
    expectDenied(await call(t.apiKey, crm('delete', { id: 1 })), 'crm_delete_not_allowed');
    expectDenied(await call(t.apiKey, crm('update', { id: 1, fields: { owner: 'mallory' } })), 'restricted_field_modification_owner');
    expectDenied(await call(t.apiKey, crm('update', { id: 1, fields: { revenue: 1 } })), 'restricted_field_modification_revenue');
    expectMedium(await call(t.apiKey, crm('list', { ids: eleven.map((r) => r.id) })), 'bulk_operation_exceeds_threshold');
    const bulk = await call(t.apiKey, crm('update', { records: eleven }));
    await expectApproval(t.apiKey, bulk, 'bulk_modification_requires_approval');
    expect((await auditRecord(t.apiKey, bulk.body.action_id)).violations).toContain('bulk_operation_exceeds_threshold');
    await expectApproval(t.apiKey, await call(t.apiKey, crm('export', { format: 'csv' })), 'crm_export_requires_approval');
  });

  test('overrides: allow_delete, export_approval, restricted_fields, bulk_threshold', async () => {
    const t = await tenantWith({ policy_template: 'crm', policy_config: { allow_delete: true, export_approval: false, restricted_fields: ['stage'], bulk_threshold: 20 } });
    expectClean(await call(t.apiKey, crm('delete', { id: 1 })));
    expectClean(await call(t.apiKey, crm('export', { format: 'csv' })));
    expectClean(await call(t.apiKey, crm('update', { id: 1, fields: { owner: 'bob' } })));
    expectDenied(await call(t.apiKey, crm('update', { id: 1, fields: { stage: 'lost' } })), 'restricted_field_modification_stage');
    expectClean(await call(t.apiKey, crm('list', { ids: eleven.map((r) => r.id) })));
    const rules = await api('GET', '/policy/rules', { key: t.apiKey });
    expect(rules.body.rules.map((r: { id: string }) => r.id)).toContain('restricted_field_modification_stage');
  });
});

describe('data_access template', () => {
  const q = (params: Record<string, unknown>, method = 'query', agent = 'analyst') => ({ agent_id: agent, tool: 'svc_read_database', method, params });
  const ok = { table: 'orders', columns: ['id', 'total'], limit: 100, region: 'eu-west-1' };

  test('PII access and masking, row limit, residency, full-table export approval', async () => {
    const t = await tenantWith({ policy_template: 'data_access' });
    expectClean(await call(t.apiKey, q(ok)));
    const pii = await call(t.apiKey, q({ ...ok, columns: ['id', 'email'] }));
    expectDenied(pii, 'pii_access_denied');
    expect(pii.body.detail.violations).toContain('pii_masking_required');
    expectMedium(await call(t.apiKey, q({ ...ok, limit: 20000 })), 'query_row_limit_exceeded');
    expectDenied(await call(t.apiKey, q({ ...ok, region: 'us-east-1' })), 'data_residency_violation');
    await expectApproval(t.apiKey, await call(t.apiKey, q({ ...ok, limit: 5000 }, 'export')), 'full_table_export_requires_approval');
    expectClean(await call(t.apiKey, q({ ...ok, limit: 1000 }, 'export')));
  });

  test('pii_allowed with masking; daily_query_limit_exceeded (medium)', async () => {
    const t = await tenantWith({ policy_template: 'data_access', policy_config: { pii_allowed: true, daily_query_limit: 2, allowed_regions: ['eu-west-1', 'us-east-1'] } });
    const unmasked = await call(t.apiKey, q({ ...ok, columns: ['email'] }, 'query', 'pii-reader'));
    expectDenied(unmasked, 'pii_masking_required');
    expect(unmasked.body.detail.violations).not.toContain('pii_access_denied');
    expectClean(await call(t.apiKey, q({ ...ok, columns: ['email'], masked: true, region: 'us-east-1' }, 'query', 'pii-reader')));
    expectMedium(await call(t.apiKey, q(ok, 'query', 'pii-reader')), 'daily_query_limit_exceeded');
  });
});
