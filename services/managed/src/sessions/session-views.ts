/**
 * What a tenant reads about its managed sessions: the session with its four totals (computed live from the
 * audit log by the audit service, never cached), the session's audit trail, its compliance report with
 * the AGCS control map, a replay of its governed calls under the current policy, the event consumers, and
 * the governance view the gateway's per-session MCP server needs.
 */
import { type Json, NotFoundError, jsonOf, objectFromAnswerJson } from '@agw/shared';
import type { audit } from '@agw/proto';
import type { AgentConfigs } from '../agents/agent-configs';
import type { AuditClient, PolicyClient } from '../clients';
import type { SessionRepository, SessionRow } from './session.repository';

export interface Totals {
  governed: number;
  observed: number;
  denied: number;
  pending: number;
}

export const AGCS_CONTROLS = {
  'AG-1.1': 'Policy evaluation',
  'AG-1.2': 'Hash-chained audit verified',
  'AG-1.3': 'Action ids assigned',
  'AG-1.6': 'Actions through approval queue',
  'AG-1.9': 'Credentials brokered via HSM',
  'AG-2.1': 'Structured audit schema',
} as const;

const MAX_SESSION_RECORDS = 10_000;

export class SessionViews {
  constructor(
    private readonly repo: SessionRepository,
    private readonly configs: AgentConfigs,
    private readonly audit: AuditClient,
    private readonly policy: PolicyClient,
  ) {}

  async get(tenantId: string, id: string): Promise<SessionRow> {
    const s = await this.repo.get(tenantId, id);
    if (!s) throw new NotFoundError(`Managed session ${id} not found`);
    return s;
  }

  async totals(tenantId: string, ids: string[]): Promise<Map<string, Totals>> {
    const out = new Map<string, Totals>();
    for (let i = 0; i < ids.length; i += 500) {
      const { totals } = await this.audit.sessionTotals({ tenant_id: tenantId, session_ids: ids.slice(i, i + 500) });
      for (const t of totals) out.set(t.session_id, { governed: t.governed, observed: t.observed, denied: t.denied, pending: t.pending });
    }
    return out;
  }

  async withTotals(tenantId: string, rows: SessionRow[]): Promise<Array<{ session: SessionRow; totals: Totals }>> {
    const totals = await this.totals(tenantId, rows.map((r) => r.id));
    return rows.map((session) => ({ session, totals: totals.get(session.id) ?? { governed: 0, observed: 0, denied: 0, pending: 0 } }));
  }

  /** The session's records, oldest first. */
  async records(tenantId: string, id: string, limit: number): Promise<audit.AuditRecord[]> {
    await this.get(tenantId, id);
    return (await this.audit.listRecords({ tenant_id: tenantId, limit, session_id: id, chronological: true, member_id: '' })).records;
  }

  async compliance(tenantId: string, id: string) {
    const s = await this.get(tenantId, id);
    const config = await this.configs.get(tenantId, s.agent_id);
    const [records, totals, chain] = await Promise.all([
      this.records(tenantId, id, MAX_SESSION_RECORDS),
      this.totals(tenantId, [id]).then((m) => m.get(id) ?? { governed: 0, observed: 0, denied: 0, pending: 0 }),
      this.audit.verify({ tenant_id: tenantId }),
    ]);
    const entries = records.map((r) => ({ ...r.entry!, details: safeJson(jsonOf(r.entry, 'details')) }));
    const governed = entries.filter((e) => e.source === 'mcp_governed');
    const anomalies = entries.filter((e) => e.source === 'mcp_observed' && ((e.details.anomaly as { signals?: unknown[] } | undefined)?.signals?.length ?? 0) > 0).length;
    const approvals = entries.filter((e) => e.source === 'control_plane' && typeof e.details.approval === 'string').length;
    const escalated = governed.filter((e) => e.decision === 'requires_human').length;
    const brokered = governed.filter((e) => e.decision === 'allow' && e.execution_mode === 'gateway_brokered').length;
    const withIds = entries.filter((e) => /^[0-9a-f-]{36}$/i.test(e.action_id)).length;
    const ended = s.ended_at ?? new Date();
    const bundles = [...new Set(governed.map((e) => e.bundle_revision))];
    return {
      session: {
        id: s.id,
        agent_id: s.agent_id,
        status: s.status,
        system_prompt_hash: s.system_prompt_hash,
        created_at: s.created_at.toISOString(),
        ended_at: s.ended_at?.toISOString() ?? null,
        duration_seconds: Math.round((ended.getTime() - s.created_at.getTime()) / 100) / 10,
      },
      governance_profile: { allowed_tools: config.allowed_tools, require_human_approval: config.require_human_approval },
      summary: {
        total_events: entries.length,
        governed_calls: totals.governed,
        observed_calls: totals.observed,
        denied: totals.denied,
        pending: totals.pending,
        anomalies_detected: anomalies,
        denial_rate: `${totals.governed ? ((totals.denied / totals.governed) * 100).toFixed(1) : '0.0'}%`,
        approvals_used: approvals,
      },
      timeline: entries.map((e) => ({ action_id: e.action_id, tool: e.tool, decision: e.decision, source: e.source, requested_at: e.requested_at })),
      agcs_controls: {
        'AG-1.1': `${AGCS_CONTROLS['AG-1.1']}: ${governed.length} governed call(s) evaluated by the tenant's Rego policy (bundle ${bundles.join(', ') || s.bundle_revision || 'n/a'}) before anything ran`,
        'AG-1.2': `${AGCS_CONTROLS['AG-1.2']}: ${chain.valid ? 'the tenant chain verifies' : `the tenant chain is BROKEN at action ${chain.failed_at_action_id} (${chain.reason})`} (${chain.record_count} records, SHA-256 links from GENESIS)`,
        'AG-1.3': `${AGCS_CONTROLS['AG-1.3']}: ${withIds} of ${entries.length} records of this session carry a unique action id`,
        'AG-1.6': `${AGCS_CONTROLS['AG-1.6']}: ${escalated} call(s) escalated to a human, ${approvals} decided, ${totals.pending} pending`,
        'AG-1.9': `${AGCS_CONTROLS['AG-1.9']}: ${brokered} call(s) executed by the gateway with HSM-held credentials; the agent never held a credential`,
        'AG-2.1': `${AGCS_CONTROLS['AG-2.1']}: every record has action_id, agent_id, tool, method, decision, source, severity, violations, bundle_revision, record_hash and prev_hash`,
      },
      generated_at: new Date().toISOString(),
    };
  }

  /** Governed calls of the session replayed under the tenant's current policy. */
  async replay(tenantId: string, id: string) {
    const records = await this.records(tenantId, id, MAX_SESSION_RECORDS);
    const actionIds = [...new Set(records.filter((r) => r.entry!.source === 'mcp_governed' && r.entry!.decision !== 'observed').map((r) => r.entry!.action_id))];
    const results = [];
    for (let i = 0; i < actionIds.length; i += 1000) results.push(...(await this.policy.replay({ tenant_id: tenantId, action_ids: actionIds.slice(i, i + 1000), candidate: undefined })).results);
    const found = results.filter((r) => r.found);
    const changed = found.filter((r) => !r.consistent);
    return {
      session_id: id,
      total_replayed: found.length,
      consistent: found.length - changed.length,
      changed: changed.length,
      changes: changed.map((r) => ({
        action_id: r.action_id,
        tool: r.tool,
        original_decision: r.original_decision,
        replayed_decision: r.replay_decision,
        new_violations: r.replay_violations.filter((v) => !r.original_violations.includes(v)),
      })),
    };
  }
}

/** A record's details for the report: {} when unset or malformed (the report is made of what reads). */
function safeJson(json: Json | undefined): Record<string, unknown> {
  try {
    return objectFromAnswerJson(json, 'details');
  } catch {
    return {};
  }
}
