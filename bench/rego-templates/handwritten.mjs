// Hand-written JS equivalents of the representative templates in this folder (the baseline of the benchmark).
const sevOf = (violations, high) => (violations.some((v) => high.has(v)) ? 'high' : violations.length > 0 ? 'medium' : 'none');
const verdict = (severity, rh) => (severity === 'high' ? 'deny' : rh ? 'requires_human' : 'allow');
const sorted = (s) => [...s].sort();

export const handwritten = {
  general(input, cfg) {
    const v = new Set();
    const b = input.behavioral ?? {};
    if (b.anomaly_score > cfg.anomaly_threshold) v.add('anomaly_score_threshold_exceeded');
    if (b.action_count_1h * 24 > cfg.daily_action_limit) v.add('daily_action_limit_exceeded');
    if (b.violations_24h >= cfg.cooldown_violations) v.add('violation_cooldown_active');
    const approve = typeof cfg.approve_destructive === 'boolean' ? cfg.approve_destructive : true;
    const rh = approve && typeof input.method === 'string' && ['delete', 'destroy', 'purge', 'drop'].includes(input.method.toLowerCase());
    const violations = sorted(v);
    const severity = sevOf(violations, new Set(['anomaly_score_threshold_exceeded', 'violation_cooldown_active']));
    const alert_tier = severity === 'high' ? 'P1' : severity === 'medium' ? 'P2' : 'P3';
    return { decision: verdict(severity, rh), violations, severity, alert_tier, requires_human: rh };
  },
  financial(input, cfg, nowMs) {
    const v = new Set();
    const p = input.params ?? {};
    const amount = p.amount ?? 0;
    if (amount >= cfg.transaction_limit) v.add('transaction_exceeds_limit');
    if (p.currency && p.currency.toUpperCase() !== cfg.currency) v.add('currency_mismatch');
    const d = new Date(nowMs);
    const day = d.getUTCDay(), hour = d.getUTCHours();
    const business = day !== 0 && day !== 6 && hour >= 9 && hour < 18;
    if (cfg.business_hours_only && amount >= 100 && !business) v.add('transaction_outside_business_hours');
    if (input.behavioral.action_count_1h * 24 > cfg.daily_transaction_cap) v.add('daily_transaction_cap_exceeded');
    const rh = amount >= cfg.approval_threshold;
    const violations = sorted(v);
    const severity = sevOf(violations, new Set(['transaction_exceeds_limit']));
    return { decision: verdict(severity, rh), violations, severity, requires_human: rh };
  },
  email(input, cfg) {
    const v = new Set();
    const p = input.params ?? {};
    const parts = String(p.to).split('@');
    const domain = parts[parts.length - 1].toLowerCase();
    if (cfg.blocked_domains.includes(domain)) v.add('consumer_email_blocked');
    if (input.behavioral.action_count_1h * 24 > cfg.daily_send_limit) v.add('daily_send_limit_exceeded');
    const body = String(p.body ?? '').toLowerCase();
    if (cfg.require_disclosure && !body.includes('ai-generated') && !body.includes('automated')) v.add('missing_ai_disclosure');
    const rh = !!cfg.first_contact_approval && !p.prior_contact_exists;
    const violations = sorted(v);
    const severity = v.has('consumer_email_blocked') ? 'high' : violations.length ? 'medium' : 'none';
    return { decision: verdict(severity, rh), violations, severity, requires_human: rh };
  },
  crm(input, cfg) {
    const v = new Set();
    const p = input.params ?? {};
    const method = input.method.toLowerCase();
    if (method === 'delete' && !cfg.allow_delete) v.add('crm_delete_not_allowed');
    for (const f of cfg.restricted_fields) if (p.fields && p.fields[f] !== undefined && p.fields[f] !== false) v.add(`restricted_field_modification_${f}`);
    const bulk = (p.records ?? []).length > cfg.bulk_threshold;
    if (bulk) v.add('bulk_operation_exceeds_threshold');
    const rh = (cfg.export_approval && method.startsWith('export')) || bulk;
    const violations = sorted(v);
    const severity = violations.some((x) => x !== 'bulk_operation_exceeds_threshold') ? 'high' : violations.length ? 'medium' : 'none';
    return { decision: verdict(severity, rh), violations, severity, requires_human: rh };
  },
  data_access(input, cfg) {
    const v = new Set();
    const p = input.params ?? {};
    if (input.pii_detected && !cfg.pii_allowed) v.add('pii_access_denied');
    if (input.pii_detected && cfg.require_masking && !p.masked) v.add('pii_masking_required');
    if (p.limit > cfg.max_row_limit) v.add('query_row_limit_exceeded');
    if (!cfg.allowed_regions.includes(p.region ?? 'eu-west-1')) v.add('data_residency_violation');
    if (input.behavioral.action_count_1h * 24 > cfg.daily_query_limit) v.add('daily_query_limit_exceeded');
    const rh = !!p.full_table_export && p.limit > 1000;
    const violations = sorted(v);
    const severity = sevOf(violations, new Set(['pii_access_denied', 'pii_masking_required', 'data_residency_violation']));
    return { decision: verdict(severity, rh), violations, severity, requires_human: rh };
  },
};

const behavioral = { action_count_1h: 12, action_count_24h: 140, tool_count_24h: 35, violation_count_24h: 1, anomaly_score: 0.35, last_action_seconds_ago: 40, session_total_amount: 1200, violations_24h: 1 };
const base = { agent_id: 'agent-7f3c', agent_type: 'autonomous', pii_detected: false, behavioral };

/** typical input and template defaults (interface spec) per template */
export const scenarios = {
  general: {
    input: { ...base, tool: 'svc_read_database', method: 'delete', params: { table: 'orders', id: 42 } },
    config: { daily_action_limit: 200, anomaly_threshold: 0.7, cooldown_violations: 3, approve_destructive: true },
  },
  financial: {
    input: { ...base, tool: 'svc_payments', method: 'transfer', params: { amount: 1500, currency: 'eur', iban: 'DE89370400440532013000' } },
    config: { transaction_limit: 5000, currency: 'EUR', business_hours_only: true, approval_threshold: 1000, daily_transaction_cap: 100 },
  },
  email: {
    input: { ...base, tool: 'svc_send_email', method: 'send', params: { to: 'jane.doe@gmail.com', subject: 'Offer', body: 'Hello Jane, here is the offer.' } },
    config: { daily_send_limit: 50, require_disclosure: true, first_contact_approval: true, blocked_domains: ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'aol.com', 'icloud.com', 'gmx.de', 'web.de'] },
  },
  crm: {
    input: { ...base, tool: 'svc_crm', method: 'update', params: { fields: { owner: 'bob', stage: 'won' }, records: [1, 2, 3] } },
    config: { bulk_threshold: 10, allow_delete: false, export_approval: true, restricted_fields: ['owner', 'revenue'] },
  },
  data_access: {
    input: { ...base, tool: 'svc_read_database', method: 'query', pii_detected: true, params: { table: 'customers', limit: 500, region: 'eu-west-1', masked: true } },
    config: { max_row_limit: 10000, pii_allowed: false, allowed_regions: ['eu-west-1'], require_masking: true, daily_query_limit: 500 },
  },
};
