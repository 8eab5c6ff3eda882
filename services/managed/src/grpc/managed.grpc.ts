/** gRPC adapter of the managed service: translate messages, call the domain, nothing else. */
import { managed as pb } from '@agw/proto';
import { type GrpcServiceBinding, InputError, type Logger, implement } from '@agw/shared';
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

function json(text: string, field: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* below */
  }
  throw InputError.field(field, 'must be a JSON object', 'type_error');
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

export function toConfig(c: AgentConfigRow): pb.AgentConfig {
  return {
    id: c.id,
    tenantId: c.tenant_id,
    name: c.name,
    anthropicModel: c.anthropic_model,
    systemPrompt: c.system_prompt ?? '',
    allowedTools: c.allowed_tools,
    requireHumanApproval: c.require_human_approval,
    maxSessionHours: c.max_session_hours,
    maxDailySessions: c.max_daily_sessions ?? 0,
    maxDelegationDepth: c.max_delegation_depth,
    governanceProfileJson: JSON.stringify(c.governance_profile),
    parentAgentId: c.parent_agent_id ?? '',
    createdAt: iso(c.created_at),
    depth: c.depth,
  };
}

export function toSession(s: SessionRow, totals?: Totals): pb.Session {
  return {
    sessionId: s.id,
    anthropicSessionId: s.anthropic_session_id ?? '',
    tenantId: s.tenant_id,
    agentId: s.agent_id,
    status: s.status,
    systemPromptHash: s.system_prompt_hash,
    governance: 'active',
    mcpServerUrl: s.mcp_server_url,
    createdAt: iso(s.created_at),
    endedAt: iso(s.ended_at),
    totals: totals ?? { governed: 0, observed: 0, denied: 0, pending: 0 },
    endReason: s.end_reason ?? '',
  };
}

export function managedGrpcService(d: ManagedDomain, logger: Logger): GrpcServiceBinding {
  return {
    definition: pb.ManagedServiceService,
    implementation: implement(
      pb.ManagedServiceService,
      {
        createAgent: async (r) =>
          toConfig(
            await d.configs.create(r.tenantId, {
              name: r.name,
              anthropic_model: r.anthropicModel,
              system_prompt: r.systemPrompt || null,
              allowed_tools: r.allowedTools,
              require_human_approval: r.requireHumanApproval,
              max_session_hours: r.maxSessionHours,
              max_daily_sessions: r.maxDailySessions,
              max_delegation_depth: r.maxDelegationDepth,
              governance_profile: json(r.governanceProfileJson, 'governance_profile'),
              parent_agent_id: r.parentAgentId || null,
            }),
          ),
        listAgents: async (r) => ({ configs: (await d.configs.list(r.tenantId)).map(toConfig) }),
        getAgent: async (r) => toConfig(await d.configs.get(r.tenantId, r.configId)),
        createSession: async (r) =>
          toSession(
            await d.launcher.create(r.tenantId, {
              sessionId: r.sessionId,
              agentId: r.agentId,
              userMessage: r.userMessage,
              environmentId: r.environmentId,
              metadata: json(r.metadataJson, 'metadata'),
              mcpBearer: r.mcpBearer,
              mcpServerUrl: r.mcpServerUrl,
              askTools: r.askTools,
            }),
          ),
        listSessions: async (r) => {
          const rows = await d.repo.list(r.tenantId, { status: r.status || undefined, agentId: r.agentId || undefined });
          return { sessions: (await d.views.withTotals(r.tenantId, rows)).map((x) => toSession(x.session, x.totals)) };
        },
        getSession: async (r) => {
          const [x] = await d.views.withTotals(r.tenantId, [await d.views.get(r.tenantId, r.sessionId)]);
          return toSession(x.session, x.totals);
        },
        getSessionAudit: async (r) => {
          const records = await d.views.records(r.tenantId, r.sessionId, r.limit || 200);
          return {
            sessionId: r.sessionId,
            records: records.map(({ entry: e }) => ({
              actionId: e!.actionId,
              tool: e!.tool,
              method: e!.method,
              decision: e!.decision,
              source: e!.source,
              severity: e!.severity,
              violations: e!.violations,
              requestedAt: e!.requestedAt,
            })),
          };
        },
        interruptSession: async (r) => {
          const x = await d.interrupter.interrupt(r.tenantId, r.sessionId, r.reason, r.autoTriggered);
          return { status: x.status, sessionId: x.session_id, reason: x.reason, interruptedAt: x.interrupted_at, autoTriggered: x.auto_triggered, auditActionId: x.audit_action_id };
        },
        getSessionCompliance: async (r) => {
          const c = await d.views.compliance(r.tenantId, r.sessionId);
          return {
            session: {
              id: c.session.id,
              agentId: c.session.agent_id,
              status: c.session.status,
              systemPromptHash: c.session.system_prompt_hash,
              createdAt: c.session.created_at,
              endedAt: c.session.ended_at ?? '',
              durationSeconds: c.session.duration_seconds,
            },
            allowedTools: c.governance_profile.allowed_tools,
            requireHumanApproval: c.governance_profile.require_human_approval,
            summary: {
              totalEvents: c.summary.total_events,
              governedCalls: c.summary.governed_calls,
              observedCalls: c.summary.observed_calls,
              denied: c.summary.denied,
              pending: c.summary.pending,
              anomaliesDetected: c.summary.anomalies_detected,
              denialRate: c.summary.denial_rate,
              approvalsUsed: c.summary.approvals_used,
            },
            timeline: c.timeline.map((t) => ({ actionId: t.action_id, tool: t.tool, decision: t.decision, source: t.source, requestedAt: t.requested_at })),
            agcsControls: c.agcs_controls,
            generatedAt: c.generated_at,
          };
        },
        replaySession: async (r) => {
          const x = await d.views.replay(r.tenantId, r.sessionId);
          return {
            sessionId: x.session_id,
            totalReplayed: x.total_replayed,
            consistent: x.consistent,
            changed: x.changed,
            changes: x.changes.map((c) => ({ actionId: c.action_id, tool: c.tool, originalDecision: c.original_decision, replayedDecision: c.replayed_decision, newViolations: c.new_violations })),
          };
        },
        listConsumers: async (r) => ({
          consumers: (await d.repo.consumers(r.tenantId)).map((s) => ({
            sessionId: s.id,
            anthropicSessionId: s.anthropic_session_id ?? '',
            tenantId: s.tenant_id,
            agentId: s.agent_id,
            status: s.consumer_status,
            eventsProcessed: s.events_processed,
            connectedSince: iso(s.connected_since),
          })),
        }),
        getSessionGovernance: async (r) => {
          const s = await d.views.get(r.tenantId, r.sessionId);
          const c = await d.configs.get(r.tenantId, s.agent_id);
          return { sessionId: s.id, agentId: s.agent_id, status: s.status, allowedTools: c.allowed_tools, requireHumanApproval: c.require_human_approval };
        },
      },
      logger,
    ),
  };
}
