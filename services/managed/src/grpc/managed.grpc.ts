/** gRPC adapter of the managed service: translate messages, call the domain, nothing else. */
import { managed as pb } from '@agw/proto';
import { type GrpcServiceBinding, type Logger, bindService, jsonField, jsonOf, objectFromJson } from '@agw/shared';
import type { AgentConfigRow } from '../agents/agent-config.repository';
import type { AgentConfigs } from '../agents/agent-configs';
import type { SessionInterrupter } from '../sessions/session-interrupter';
import type { SessionLauncher } from '../sessions/session-launcher';
import type { SessionRow } from '../sessions/session.repository';
import type { SessionRepository } from '../sessions/session.repository';
import type { SessionViews, Totals } from '../sessions/session-views';

export interface ManagedDomain {
  configs: AgentConfigs;
  launcher: SessionLauncher;
  interrupter: SessionInterrupter;
  views: SessionViews;
  repo: SessionRepository;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

export function toConfig(c: AgentConfigRow): pb.AgentConfig {
  return {
    id: c.id,
    tenant_id: c.tenant_id,
    name: c.name,
    anthropic_model: c.anthropic_model,
    system_prompt: c.system_prompt ?? '',
    allowed_tools: c.allowed_tools,
    require_human_approval: c.require_human_approval,
    max_session_hours: c.max_session_hours,
    max_daily_sessions: c.max_daily_sessions ?? 0,
    max_delegation_depth: c.max_delegation_depth,
    ...jsonField('governance_profile', c.governance_profile),
    parent_agent_id: c.parent_agent_id ?? '',
    created_at: iso(c.created_at),
    depth: c.depth,
  };
}

export function toSession(s: SessionRow, totals?: Totals): pb.Session {
  return {
    session_id: s.id,
    anthropic_session_id: s.anthropic_session_id ?? '',
    tenant_id: s.tenant_id,
    agent_id: s.agent_id,
    status: s.status,
    system_prompt_hash: s.system_prompt_hash,
    governance: 'active',
    mcp_server_url: s.mcp_server_url,
    created_at: iso(s.created_at),
    ended_at: iso(s.ended_at),
    totals: totals ?? { governed: 0, observed: 0, denied: 0, pending: 0 },
    end_reason: s.end_reason ?? '',
  };
}

export function managedGrpcService(d: ManagedDomain, logger: Logger): GrpcServiceBinding {
  return bindService(
    pb.ManagedServiceService,
    {
      createAgent: async (r) =>
        toConfig(
          await d.configs.create(r.tenant_id, {
            name: r.name,
            anthropic_model: r.anthropic_model,
            system_prompt: r.system_prompt || null,
            allowed_tools: r.allowed_tools,
            require_human_approval: r.require_human_approval,
            max_session_hours: r.max_session_hours,
            max_daily_sessions: r.max_daily_sessions,
            max_delegation_depth: r.max_delegation_depth,
            governance_profile: objectFromJson(jsonOf(r, 'governance_profile'), 'governance_profile'),
            parent_agent_id: r.parent_agent_id || null,
          }),
        ),
      listAgents: async (r) => ({ configs: (await d.configs.list(r.tenant_id)).map(toConfig) }),
      getAgent: async (r) => toConfig(await d.configs.get(r.tenant_id, r.config_id)),
      createSession: async (r) =>
        toSession(
          await d.launcher.create(r.tenant_id, {
            sessionId: r.session_id,
            agentId: r.agent_id,
            userMessage: r.user_message,
            environmentId: r.environment_id,
            metadata: objectFromJson(jsonOf(r, 'metadata'), 'metadata'),
            mcpBearer: r.mcp_bearer,
            mcpServerUrl: r.mcp_server_url,
            askTools: r.ask_tools,
          }),
        ),
      listSessions: async (r) => {
        const rows = await d.repo.list(r.tenant_id, { status: r.status || undefined, agentId: r.agent_id || undefined });
        return { sessions: (await d.views.withTotals(r.tenant_id, rows)).map((x) => toSession(x.session, x.totals)) };
      },
      getSession: async (r) => {
        const [x] = await d.views.withTotals(r.tenant_id, [await d.views.get(r.tenant_id, r.session_id)]);
        return toSession(x.session, x.totals);
      },
      getSessionAudit: async (r) => {
        const records = await d.views.records(r.tenant_id, r.session_id, r.limit || 200);
        return {
          session_id: r.session_id,
          records: records.map(({ entry: e }) => ({
            action_id: e!.action_id,
            tool: e!.tool,
            method: e!.method,
            decision: e!.decision,
            source: e!.source,
            severity: e!.severity,
            violations: e!.violations,
            requested_at: e!.requested_at,
          })),
        };
      },
      interruptSession: async (r) => {
        const x = await d.interrupter.interrupt(r.tenant_id, r.session_id, r.reason, r.auto_triggered);
        return { status: x.status, session_id: x.session_id, reason: x.reason, interrupted_at: x.interrupted_at, auto_triggered: x.auto_triggered, audit_action_id: x.audit_action_id };
      },
      getSessionCompliance: async (r) => {
        const c = await d.views.compliance(r.tenant_id, r.session_id);
        return {
          session: {
            id: c.session.id,
            agent_id: c.session.agent_id,
            status: c.session.status,
            system_prompt_hash: c.session.system_prompt_hash,
            created_at: c.session.created_at,
            ended_at: c.session.ended_at ?? '',
            duration_seconds: c.session.duration_seconds,
          },
          allowed_tools: c.governance_profile.allowed_tools,
          require_human_approval: c.governance_profile.require_human_approval,
          summary: {
            total_events: c.summary.total_events,
            governed_calls: c.summary.governed_calls,
            observed_calls: c.summary.observed_calls,
            denied: c.summary.denied,
            pending: c.summary.pending,
            anomalies_detected: c.summary.anomalies_detected,
            denial_rate: c.summary.denial_rate,
            approvals_used: c.summary.approvals_used,
          },
          timeline: c.timeline.map((t) => ({ action_id: t.action_id, tool: t.tool, decision: t.decision, source: t.source, requested_at: t.requested_at })),
          agcs_controls: c.agcs_controls,
          generated_at: c.generated_at,
        };
      },
      replaySession: async (r) => {
        const x = await d.views.replay(r.tenant_id, r.session_id);
        return {
          session_id: x.session_id,
          total_replayed: x.total_replayed,
          consistent: x.consistent,
          changed: x.changed,
          changes: x.changes.map((c) => ({ action_id: c.action_id, tool: c.tool, original_decision: c.original_decision, replayed_decision: c.replayed_decision, new_violations: c.new_violations })),
        };
      },
      listConsumers: async (r) => ({
        consumers: (await d.repo.consumers(r.tenant_id)).map((s) => ({
          session_id: s.id,
          anthropic_session_id: s.anthropic_session_id ?? '',
          tenant_id: s.tenant_id,
          agent_id: s.agent_id,
          status: s.consumer_status,
          events_processed: s.events_processed,
          connected_since: iso(s.connected_since),
        })),
      }),
      getSessionGovernance: async (r) => {
        const s = await d.views.get(r.tenant_id, r.session_id);
        const c = await d.configs.get(r.tenant_id, s.agent_id);
        return { session_id: s.id, agent_id: s.agent_id, status: s.status, allowed_tools: c.allowed_tools, require_human_approval: c.require_human_approval };
      },
    },
    logger,
  );
}
