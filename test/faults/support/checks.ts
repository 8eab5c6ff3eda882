/**
 * The guarantees of R1/R2 checked on what the fleet stored (Postgres read directly, read-only; the
 * chains through the public API; the decision events in the fleet's JetStream stream).
 */
import { type Tenant, api, eventually } from './api';
import type { CallResult } from './load';
import { type RecordRow, auditRecords, q, streamMessages } from './stores';

const ANSWERED = new Set([200, 202, 403]);
export const isPolicyRefusal = (r: CallResult) => r.status === 502 && String(r.detail).startsWith('Policy engine unreachable');

/**
 * Every call answered 200/202/403 has exactly one record (with its action id); a 502 fail-closed refusal
 * at most one (the refusal is audited when the audit service can take it: docs/policy.md), recorded as a
 * deny; any other 5xx or 4xx none; a call without an answer (timeout) at most one.
 */
export async function checkRecords(tenants: Tenant[], calls: CallResult[]) {
  const rows = await auditRecords(tenants.map((t) => t.tenantId));
  const byRef = new Map<string, RecordRow[]>();
  for (const r of rows) if (r.ref) byRef.set(r.ref, [...(byRef.get(r.ref) ?? []), r]);
  const problems: string[] = [];
  let withRecord = 0;
  let fiveXx = 0;
  let fiveXxWithRecord = 0;
  let refusals = 0;
  let unanswered = 0;
  for (const c of calls) {
    const recs = byRef.get(c.ref) ?? [];
    const what = `${c.phase} ${c.tenant.name} ${c.kind} ${c.status} ref=${c.ref}`;
    if (recs.length) withRecord++;
    if (ANSWERED.has(c.status)) {
      if (recs.length !== 1) problems.push(`${what}: ${recs.length} records (expected exactly one)`);
      else if (recs[0].action_id !== c.actionId) problems.push(`${what}: record of action ${recs[0].action_id}, answer said ${c.actionId}`);
    } else if (isPolicyRefusal(c)) {
      refusals++;
      fiveXx++;
      if (recs.length) fiveXxWithRecord++;
      if (recs.length > 1) problems.push(`${what}: ${recs.length} records of one refusal`);
      else if (recs.length === 1 && !(recs[0].decision === 'deny' && recs[0].violations.includes('policy_engine_unavailable')))
        problems.push(`${what}: a refusal recorded as ${recs[0].decision} ${JSON.stringify(recs[0].violations)}`);
    } else if (c.status === 0) {
      unanswered++;
      if (recs.length > 1) problems.push(`${what} (no answer): ${recs.length} records`);
    } else {
      if (c.status >= 500) fiveXx++;
      if (recs.length) {
        if (c.status >= 500) fiveXxWithRecord++;
        problems.push(`${what} ${JSON.stringify(c.detail)}: ${recs.length} record(s) (${recs[0].decision}) for a call answered ${c.status}`);
      }
    }
  }
  return {
    byRef,
    rows,
    problems,
    figures: {
      records_found: rows.length,
      calls_with_a_record: withRecord,
      answered_200_202_403: calls.filter((c) => ANSWERED.has(c.status)).length,
      answers_5xx: fiveXx,
      fail_closed_502_refusals: refusals,
      answers_5xx_with_a_record: fiveXxWithRecord,
      unanswered,
    },
  };
}

/** The outbox drains, every tenant's chain verifies (with the database's count), each record's decision event is in the stream exactly once. */
export async function checkStreamAndChains(tenants: Tenant[], streamTimeoutMs = 60_000) {
  const problems: string[] = [];
  const t0 = Date.now();
  let outbox = -1;
  try {
    await eventually(async () => {
      outbox = Number((await q<{ n: string }>('SELECT count(*) AS n FROM event_outbox'))[0].n);
      return outbox === 0;
    }, streamTimeoutMs, 500);
  } catch {
    problems.push(`the event outbox still holds ${outbox} events after ${streamTimeoutMs / 1000} s`);
  }
  const drainMs = Date.now() - t0;
  const chains: Record<string, unknown> = {};
  for (const t of tenants) {
    const v = await api('GET', '/audit/verify', { key: t.apiKey });
    const n = Number((await q<{ n: string }>('SELECT count(*) AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId]))[0].n);
    chains[t.name] = v.body;
    if (v.status !== 200 || v.body.valid !== true) problems.push(`chain of ${t.name} does not verify: ${v.status} ${JSON.stringify(v.body)}`);
    else if (v.body.record_count !== n) problems.push(`chain of ${t.name} verified ${v.body.record_count} records, the database holds ${n}`);
  }
  const ids = new Set(tenants.map((t) => t.tenantId));
  // control-plane changes (decision `changed`) and four-eyes votes publish no decision event by design (docs/audit.md, "Who acted")
  const rows = (await auditRecords([...ids])).filter((r) => !(r.source === 'control_plane' && (r.decision === 'changed' || r.decision === 'requires_human')));
  const events = (await streamMessages('DECISIONS')).map((m) => JSON.parse(m.data)).filter((e) => ids.has(e.tenant_id));
  const perAction = new Map<string, number>();
  for (const e of events) perAction.set(e.action_id, (perAction.get(e.action_id) ?? 0) + 1);
  const recorded = new Set(rows.map((r) => r.action_id));
  let missing = 0;
  let duplicated = 0;
  for (const r of rows) {
    const n = perAction.get(r.action_id) ?? 0;
    if (n === 0) missing++;
    if (n > 1) duplicated++;
    if (n !== 1 && problems.length < 50) problems.push(`record ${r.action_id} (${r.decision}, ${r.source}) has ${n} decision events in the stream`);
  }
  const orphans = [...perAction.keys()].filter((a) => !recorded.has(a));
  if (orphans.length) problems.push(`${orphans.length} decision events without a record, e.g. ${orphans.slice(0, 3).join(', ')}`);
  return {
    problems,
    figures: {
      outbox_drained_ms: drainMs,
      outbox_left: outbox,
      chains_verified: Object.values(chains).filter((c: any) => c?.valid === true).length,
      chains: tenants.length,
      decision_events: events.length,
      records_without_event: missing,
      records_with_duplicate_events: duplicated,
      events_without_record: orphans.length,
    },
  };
}
