/** Every rule of the spec's "Template rules" table, evaluated on the real template modules. */
import path from 'node:path';
import { templateBundle } from '../bundles/policy-bundle';
import { effectiveConfig } from '../bundles/policy-config';
import { TEMPLATE_NAMES, type TemplateCatalog, TemplateCatalog as Catalog } from './template-catalog';

let catalog: TemplateCatalog;
beforeAll(async () => {
  catalog = await Catalog.load(path.resolve(__dirname, '../../templates'));
});

const WEDNESDAY_10_30 = BigInt(Date.UTC(2026, 0, 7, 10, 30)) * 1_000_000n;
const SATURDAY_10_30 = BigInt(Date.UTC(2026, 0, 10, 10, 30)) * 1_000_000n;
const quiet = { action_count_1h: 1, action_count_24h: 1, tool_count_24h: 1, violation_count_24h: 0, anomaly_score: 0, last_action_seconds_ago: -1, session_total_amount: 0 };

function evalT(name: string, call: Record<string, unknown>, overrides: Record<string, unknown> = {}, nowNs = WEDNESDAY_10_30) {
  const t = catalog.get(name)!;
  const bundle = templateBundle(t, overrides, effectiveConfig(t.defaults, overrides), null, (e) => {
    throw e;
  });
  return bundle.evaluate({ agent_id: 'a', agent_type: 't', tool: 'svc_x', method: 'run', params: {}, pii_detected: false, behavioral: quiet, ...call }, nowNs);
}

test('every template loads with metadata; all but crm read input.behavioral (crm decides in one pass)', () => {
  for (const name of TEMPLATE_NAMES) {
    const t = catalog.get(name)!;
    expect(t.parameters.length).toBeGreaterThan(0);
    expect(t.policy.readsInput('behavioral')).toBe(name !== 'crm');
  }
});

describe('general', () => {
  test.each([
    [{ anomaly_score: 0.71 }, 'anomaly_score_threshold_exceeded', 'deny'],
    [{ action_count_24h: 201 }, 'daily_action_limit_exceeded', 'allow'],
    [{ violation_count_24h: 3 }, 'violation_cooldown_active', 'deny'],
  ])('%j -> %s', (b, id, decision) => {
    const r = evalT('general', { behavioral: { ...quiet, ...b } });
    expect(r.violations).toEqual([id]);
    expect(r.decision).toBe(decision);
  });
  test('boundaries: exactly at the threshold/limit does not fire', () => {
    expect(evalT('general', { behavioral: { ...quiet, anomaly_score: 0.7, action_count_24h: 200, violation_count_24h: 2 } }).violations).toEqual([]);
  });
  test('destructive methods need approval unless approve_destructive is false', () => {
    for (const method of ['delete', 'DESTROY', 'purge', 'drop', 'delete_record']) expect(evalT('general', { method }).decision).toBe('requires_human');
    expect(evalT('general', { method: 'deleted_items_list' }).decision).toBe('allow');
    expect(evalT('general', { method: 'delete' }, { approve_destructive: false }).decision).toBe('allow');
  });
  test('pass 1 (no behavioral data) cannot fire behavioral rules', () => {
    expect(evalT('general', { behavioral: undefined }).violations).toEqual([]);
  });
});

describe('financial', () => {
  test('limit, currency, approval', () => {
    expect(evalT('financial', { params: { amount: 5000 } })).toMatchObject({ decision: 'deny', severity: 'high' });
    expect(evalT('financial', { params: { amount: 5000 } }).violations).toContain('transaction_exceeds_limit');
    expect(evalT('financial', { params: { amount: 10, currency: 'usd' } })).toMatchObject({ decision: 'allow', violations: ['currency_mismatch'], severity: 'medium' });
    expect(evalT('financial', { params: { amount: '1000.00', currency: 'eur' } })).toMatchObject({ decision: 'requires_human', violations: ['high_value_transaction_unapproved'] });
    expect(evalT('financial', { params: { amount: 999 } }).decision).toBe('allow');
  });
  test('four eyes: approval_required_approvers is the number of approvers the approval asks for', () => {
    expect(evalT('financial', { params: { amount: 2000 } })).toMatchObject({ decision: 'requires_human', requiredApprovers: 1 });
    expect(evalT('financial', { params: { amount: 2000 } }, { approval_required_approvers: 2 })).toMatchObject({ decision: 'requires_human', requiredApprovers: 2 });
    expect(evalT('financial', { params: { amount: 10 } }, { approval_required_approvers: 2 })).toMatchObject({ decision: 'allow', requiredApprovers: 0 });
  });
  test('business hours from the decision time (time.now_ns) and the configured window', () => {
    expect(evalT('financial', { params: { amount: 100 } }, {}, SATURDAY_10_30).violations).toEqual(['transaction_outside_business_hours']);
    expect(evalT('financial', { params: { amount: 99 } }, {}, SATURDAY_10_30).violations).toEqual([]);
    expect(evalT('financial', { params: { amount: 100 } }, {}, WEDNESDAY_10_30).violations).toEqual([]);
    // 10:30 UTC is 05:30 in New York: outside 9-18 there
    expect(evalT('financial', { params: { amount: 100 } }, { business_hours: { timezone: 'America/New_York' } }, WEDNESDAY_10_30).violations).toEqual(['transaction_outside_business_hours']);
    expect(evalT('financial', { params: { amount: 100 } }, { business_hours_only: false }, SATURDAY_10_30).violations).toEqual([]);
  });
  test('daily transaction cap counts only transactions', () => {
    expect(evalT('financial', { params: { amount: 1 }, behavioral: { ...quiet, tool_count_24h: 101 } }).violations).toEqual(['daily_transaction_cap_exceeded']);
    expect(evalT('financial', { params: {}, behavioral: { ...quiet, tool_count_24h: 101 } }).violations).toEqual([]);
  });
});

describe('email', () => {
  const ok = { to: 'a@corp.example', body: 'This is AI-generated.', prior_contact_exists: true };
  test('blocked domains anywhere in the recipients', () => {
    for (const p of [{ to: 'x@gmail.com' }, { to: ['a@corp.example', 'X <x@ICLOUD.com>'] }, { bcc: 'y@gmx.com' }]) {
      expect(evalT('email', { params: { ...ok, ...p } }).violations).toContain('consumer_email_blocked');
    }
    expect(evalT('email', { params: { ...ok, to: 'x@gmail.com.corp.example' } }).violations).toEqual([]);
  });
  test('disclosure, daily send limit, first contact', () => {
    expect(evalT('email', { params: { ...ok, body: 'hi' } }).violations).toEqual(['missing_ai_disclosure']);
    expect(evalT('email', { params: { ...ok, body: 'an Automated message' } }).violations).toEqual([]);
    expect(evalT('email', { params: ok, behavioral: { ...quiet, tool_count_24h: 51 } }).violations).toEqual(['daily_send_limit_exceeded']);
    expect(evalT('email', { params: { ...ok, prior_contact_exists: false } })).toMatchObject({ decision: 'requires_human', violations: ['first_contact_requires_approval'] });
    expect(evalT('email', { params: { ...ok, prior_contact_exists: undefined } }, { first_contact_approval: false }).decision).toBe('allow');
  });
});

describe('crm', () => {
  test('delete, restricted fields, bulk, export', () => {
    expect(evalT('crm', { method: 'delete' }).violations).toEqual(['crm_delete_not_allowed']);
    expect(evalT('crm', { method: 'update', params: { fields: { owner: 'x', revenue: 2, stage: 'y' } } }).violations).toEqual([
      'restricted_field_modification_owner',
      'restricted_field_modification_revenue',
    ]);
    expect(evalT('crm', { method: 'get', params: { fields: { owner: 'x' } } }).violations).toEqual([]);
    expect(evalT('crm', { method: 'list', params: { count: 11 } })).toMatchObject({ decision: 'allow', violations: ['bulk_operation_exceeds_threshold'] });
    expect(evalT('crm', { method: 'update', params: { ids: Array.from({ length: 11 }, (_, i) => i) } })).toMatchObject({ decision: 'requires_human' });
    expect(evalT('crm', { method: 'export_contacts' })).toMatchObject({ decision: 'requires_human', violations: ['crm_export_requires_approval'] });
    expect(evalT('crm', { method: 'run', params: { operation: 'export' } }, { export_approval: false }).decision).toBe('allow');
  });
  test('rules list one restricted_field_modification_<field> per configured field', () => {
    const t = catalog.get('crm')!;
    const ids = catalog.rules('crm', effectiveConfig(t.defaults, { restricted_fields: ['a', 'b', 'c'] })).map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(['restricted_field_modification_a', 'restricted_field_modification_b', 'restricted_field_modification_c']));
  });
});

describe('data_access', () => {
  test('PII, masking, rows, region, daily limit, export approval', () => {
    expect(evalT('data_access', { pii_detected: true }).violations).toEqual(['pii_access_denied', 'pii_masking_required']);
    expect(evalT('data_access', { params: { include_pii: true, masked: true } }).violations).toEqual(['pii_access_denied']);
    expect(evalT('data_access', { params: { columns: ['Email'] } }, { pii_allowed: true }).violations).toEqual(['pii_masking_required']);
    expect(evalT('data_access', { params: { limit: 10001 } }).violations).toEqual(['query_row_limit_exceeded']);
    expect(evalT('data_access', { params: { limit: '99999' } }).violations).toEqual([]);
    expect(evalT('data_access', { params: { region: 'us-east-1' } }).violations).toEqual(['data_residency_violation']);
    expect(evalT('data_access', { behavioral: { ...quiet, tool_count_24h: 501 } }).violations).toEqual(['daily_query_limit_exceeded']);
    expect(evalT('data_access', { method: 'export', params: { limit: 1001 } })).toMatchObject({ decision: 'requires_human', violations: ['full_table_export_requires_approval'] });
    expect(evalT('data_access', { method: 'export', params: { limit: 1000 } }).decision).toBe('allow');
  });
});
