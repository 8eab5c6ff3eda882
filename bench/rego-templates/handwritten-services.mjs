// Hand-written JS equivalents of services/policy/templates/*.rego (the benchmark baseline when those
// templates are present). Each factory takes the tenant's config overrides once (as a server would)
// and returns decide(input, nowMs). Keep in step with the templates: bench prints "same result".
const RANK = { none: 0, low: 1, medium: 2, high: 3, critical: 4 };
const NAMES = ['none', 'low', 'medium', 'high', 'critical'];

function decide(violation, approval, severityOf) {
  const findings = [...violation].sort().map((id) => ({ id, kind: 'violation', severity: severityOf[id] }));
  const approvals = [...approval].sort().map((id) => ({ id, kind: 'approval', severity: severityOf[id] }));
  const all = findings.concat(approvals);
  let r = 0;
  for (const f of all) if (RANK[f.severity] > r) r = RANK[f.severity];
  const severity = NAMES[r];
  const requires_human = approval.size > 0;
  const decision = r >= 3 ? 'deny' : requires_human ? 'requires_human' : 'allow';
  const alert_tier = severity === 'critical' ? 'P1' : severity === 'high' ? 'P2' : requires_human ? 'P3' : severity === 'medium' ? 'P3' : '';
  return { decision, violations: all.map((f) => f.id), findings: all, severity, alert_tier, requires_human };
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const merge = (a, b) => { const o = { ...a }; for (const [k, v] of Object.entries(b ?? {})) o[k] = isObj(o[k]) && isObj(v) ? merge(o[k], v) : v; return o; };
const lower = (s) => (typeof s === 'string' ? s.toLowerCase() : undefined);

export const factories = {
  general(overrides) {
    const config = merge({ daily_action_limit: 200, anomaly_threshold: 0.7, cooldown_violations: 3, approve_destructive: true }, overrides);
    const severityOf = { anomaly_score_threshold_exceeded: 'high', daily_action_limit_exceeded: 'medium', violation_cooldown_active: 'high', destructive_action_requires_approval: 'low' };
    const destructiveRe = /^(delete|destroy|purge|drop)([_.:-].*)?$/;
    return (input) => {
      const v = new Set(), a = new Set();
      const b = input.behavioral;
      if (b) {
        if (typeof b.anomaly_score === 'number' && b.anomaly_score > config.anomaly_threshold) v.add('anomaly_score_threshold_exceeded');
        if (typeof b.action_count_24h === 'number' && b.action_count_24h > config.daily_action_limit) v.add('daily_action_limit_exceeded');
        if (typeof b.violation_count_24h === 'number' && b.violation_count_24h >= config.cooldown_violations) v.add('violation_cooldown_active');
      }
      const method = lower(input.method);
      if (config.approve_destructive === true && method !== undefined && destructiveRe.test(method)) a.add('destructive_action_requires_approval');
      return decide(v, a, severityOf);
    };
  },
  financial(overrides) {
    const config = merge({ transaction_limit: 5000, currency: 'EUR', business_hours_only: true, approval_threshold: 1000, daily_transaction_cap: 100, business_hours: { timezone: 'UTC', start_hour: 9, end_hour: 18, weekdays: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'] } }, overrides);
    const severityOf = { transaction_exceeds_limit: 'high', currency_mismatch: 'medium', transaction_outside_business_hours: 'medium', daily_transaction_cap_exceeded: 'medium', high_value_transaction_unapproved: 'low' };
    const bh = config.business_hours;
    const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const fmt = bh.timezone === 'UTC' ? null : new Intl.DateTimeFormat('en-US', { timeZone: bh.timezone, hourCycle: 'h23', hour: '2-digit', weekday: 'long' });
    return (input, nowMs) => {
      const v = new Set(), a = new Set();
      const p = input.params ?? {};
      let amount;
      if (typeof p.amount === 'number') amount = p.amount;
      else if (typeof p.amount === 'string' && /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(p.amount)) amount = Number(p.amount);
      let hour, weekday;
      if (fmt) { const parts = Object.fromEntries(fmt.formatToParts(nowMs).map((x) => [x.type, x.value])); hour = Number(parts.hour); weekday = parts.weekday; }
      else { const d = new Date(nowMs); hour = d.getUTCHours(); weekday = days[d.getUTCDay()]; }
      const inBusinessHours = bh.weekdays.includes(weekday) && hour >= bh.start_hour && hour < bh.end_hour;
      if (amount !== undefined && amount >= config.transaction_limit) v.add('transaction_exceeds_limit');
      if (typeof p.currency === 'string' && p.currency.trim().toUpperCase() !== String(config.currency).toUpperCase()) v.add('currency_mismatch');
      if (config.business_hours_only === true && amount !== undefined && amount >= 100 && !inBusinessHours) v.add('transaction_outside_business_hours');
      if (amount !== undefined && input.behavioral && input.behavioral.tool_count_24h > config.daily_transaction_cap) v.add('daily_transaction_cap_exceeded');
      if (amount !== undefined && amount >= config.approval_threshold) a.add('high_value_transaction_unapproved');
      return decide(v, a, severityOf);
    };
  },
  email(overrides) {
    const config = merge({ daily_send_limit: 50, require_disclosure: true, first_contact_approval: true, blocked_domains: ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'aol.com', 'icloud.com', 'gmx.com', 'protonmail.com'] }, overrides);
    const severityOf = { consumer_email_blocked: 'high', daily_send_limit_exceeded: 'medium', missing_ai_disclosure: 'medium', first_contact_requires_approval: 'low' };
    const blocked = new Set(config.blocked_domains.map((d) => d.toLowerCase()));
    const fields = ['to', 'cc', 'bcc', 'recipient', 'recipients'];
    return (input) => {
      const v = new Set(), a = new Set();
      const p = input.params ?? {};
      const recipients = new Set();
      for (const k of fields) {
        const r = p[k];
        if (typeof r === 'string') recipients.add(r);
        else if (Array.isArray(r)) for (const x of r) if (typeof x === 'string') recipients.add(x);
      }
      const domains = new Set();
      for (const r of recipients) for (const m of r.matchAll(/@([A-Za-z0-9.-]+)/g)) domains.add(m[1].toLowerCase());
      const sending = recipients.size > 0;
      const body = typeof p.body === 'string' ? p.body.toLowerCase() : '';
      for (const d of domains) if (blocked.has(d)) { v.add('consumer_email_blocked'); break; }
      if (sending && input.behavioral && input.behavioral.tool_count_24h > config.daily_send_limit) v.add('daily_send_limit_exceeded');
      if (sending && config.require_disclosure === true && !body.includes('ai-generated') && !body.includes('automated')) v.add('missing_ai_disclosure');
      if (sending && config.first_contact_approval === true && p.prior_contact_exists !== true) a.add('first_contact_requires_approval');
      return decide(v, a, severityOf);
    };
  },
  crm(overrides) {
    const config = merge({ bulk_threshold: 10, allow_delete: false, export_approval: true, restricted_fields: ['owner', 'revenue'] }, overrides);
    const severityOf = { crm_delete_not_allowed: 'high', bulk_operation_exceeds_threshold: 'medium', crm_export_requires_approval: 'low', bulk_modification_requires_approval: 'low' };
    for (const f of config.restricted_fields) severityOf[`restricted_field_modification_${f}`] = 'high';
    const destructiveRe = /^(delete|destroy|purge|drop|remove)([_.:-].*)?$/, exportRe = /^export([_.:-].*)?$/, readRe = /^(get|read|list|search|query|find|fetch|view|count)([_.:-].*)?$/;
    const containers = ['fields', 'data', 'updates', 'properties', 'changes'];
    return (input) => {
      const v = new Set(), a = new Set();
      const p = input.params ?? {};
      const method = lower(input.method);
      const destructive = method !== undefined && destructiveRe.test(method);
      const exportOp = (method !== undefined && exportRe.test(method)) || lower(p.operation) === 'export';
      const readOp = method !== undefined && readRe.test(method);
      const modifying = !destructive && !exportOp && !readOp;
      const modified = new Set();
      if (modifying) {
        for (const k of containers) if (isObj(p[k])) for (const f of Object.keys(p[k])) modified.add(f);
        if (Array.isArray(p.records)) for (const rec of p.records) if (isObj(rec)) for (const f of Object.keys(rec)) modified.add(f);
      }
      let bulk = 0;
      if (Array.isArray(p.records)) bulk = Math.max(bulk, p.records.length);
      if (Array.isArray(p.ids)) bulk = Math.max(bulk, p.ids.length);
      if (typeof p.count === 'number') bulk = Math.max(bulk, p.count);
      if (destructive && config.allow_delete === false) v.add('crm_delete_not_allowed');
      for (const f of config.restricted_fields) if (modified.has(f)) v.add(`restricted_field_modification_${f}`);
      if (bulk > config.bulk_threshold) v.add('bulk_operation_exceeds_threshold');
      if (exportOp && config.export_approval === true) a.add('crm_export_requires_approval');
      if (bulk > config.bulk_threshold && (modifying || (destructive && config.allow_delete === true))) a.add('bulk_modification_requires_approval');
      return decide(v, a, severityOf);
    };
  },
  data_access(overrides) {
    const config = merge({ max_row_limit: 10000, pii_allowed: false, allowed_regions: ['eu-west-1'], require_masking: true, daily_query_limit: 500, pii_columns: ['email', 'phone', 'ssn', 'name', 'first_name', 'last_name', 'address', 'date_of_birth', 'iban', 'credit_card', 'passport_number'] }, overrides);
    const severityOf = { pii_access_denied: 'high', pii_masking_required: 'high', query_row_limit_exceeded: 'medium', data_residency_violation: 'high', daily_query_limit_exceeded: 'medium', full_table_export_requires_approval: 'low' };
    const piiCols = new Set(config.pii_columns.map((c) => c.toLowerCase()));
    const exportRe = /^export([_.:-].*)?$/;
    return (input) => {
      const v = new Set(), a = new Set();
      const p = input.params ?? {};
      const method = lower(input.method);
      const exportOp = (method !== undefined && exportRe.test(method)) || lower(p.operation) === 'export' || p.full_table_export === true;
      let piiAccess = input.pii_detected === true || p.include_pii === true;
      if (!piiAccess) for (const k of ['fields', 'columns', 'select']) if (Array.isArray(p[k])) for (const c of p[k]) if (typeof c === 'string' && piiCols.has(c.toLowerCase())) piiAccess = true;
      const masked = p.masked === true || p.mask === true || p.masking === true;
      const limit = typeof p.limit === 'number' ? p.limit : undefined;
      if (piiAccess && config.pii_allowed === false) v.add('pii_access_denied');
      if (piiAccess && config.require_masking === true && !masked) v.add('pii_masking_required');
      if (limit !== undefined && limit > config.max_row_limit) v.add('query_row_limit_exceeded');
      if (typeof p.region === 'string' && !config.allowed_regions.includes(p.region)) v.add('data_residency_violation');
      if (input.behavioral && input.behavioral.tool_count_24h > config.daily_query_limit) v.add('daily_query_limit_exceeded');
      if (exportOp && limit !== undefined && limit > 1000) a.add('full_table_export_requires_approval');
      return decide(v, a, severityOf);
    };
  },
};
