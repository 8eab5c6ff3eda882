/**
 * Managed agents and sessions (`/api/managed/*`): validation (422 with `loc`), then one call to the managed
 * service over gRPC, then the spec's response shape. Session creation hands the platform a bearer for our
 * MCP server: the caller's API key (spec), or, for a signed-in user, a token scoped to that session's MCP
 * server that expires with it.
 */
import { randomUUID } from 'node:crypto';
import type { managed } from '@agw/proto';
import { NotFoundError } from '@agw/shared';
import { type Request, Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths, jsonBody } from '../../openapi/openapi';
import { isUuid, uuidParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const toolName = z.string().min(1).max(256);

export const managedAgentSchema = z
  .object({
    name: z.string().min(1).max(256),
    anthropic_model: z.string().min(1).max(256).optional(),
    system_prompt: z.string().max(100_000).nullable().optional(),
    allowed_tools: z.array(toolName).max(256).optional(),
    require_human_approval: z.array(toolName).max(256).optional(),
    max_session_hours: z.number().min(0.1).max(24).optional(),
    max_daily_sessions: z.number().int().min(1).max(1000).optional(),
    max_delegation_depth: z.number().int().min(1).max(5).optional(),
    governance_profile: z.record(z.string(), z.unknown()).optional(),
    parent_agent_id: z.string().max(256).nullable().optional(),
  })
  .strict();

export const managedSessionSchema = z
  .object({
    agent_id: z.string().min(1).max(256),
    user_message: z.string().max(100_000).optional(),
    environment_id: z.string().min(1).max(256).optional(),
    metadata: z
      .record(z.string().min(1).max(64), z.unknown())
      .refine((m) => Object.keys(m).length <= 13, 'at most 13 keys (the platform keeps 16, three are the gateway’s)')
      .refine((m) => Object.values(m).every((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '').length <= 512), 'each value at most 512 characters (as JSON text)')
      .optional(),
  })
  .strict();

export const SESSION_STATUSES = ['active', 'completed', 'interrupted', 'failed'] as const;
const listQuery = z.object({ status: z.enum(SESSION_STATUSES).optional(), agent_id: z.string().max(256).optional() });
const auditQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(200) });
export const interruptSchema = z.object({ reason: z.string().min(1).max(1000), auto_triggered: z.boolean().default(false) }).strict();

const nullIfEmpty = (s: string) => s || null;

export function presentConfig(c: managed.AgentConfig) {
  return {
    id: c.id,
    tenant_id: c.tenantId,
    name: c.name,
    anthropic_model: c.anthropicModel,
    system_prompt: nullIfEmpty(c.systemPrompt),
    allowed_tools: c.allowedTools,
    require_human_approval: c.requireHumanApproval,
    max_session_hours: c.maxSessionHours,
    max_daily_sessions: c.maxDailySessions || null,
    max_delegation_depth: c.maxDelegationDepth,
    governance_profile: JSON.parse(c.governanceProfileJson || '{}'),
    parent_agent_id: nullIfEmpty(c.parentAgentId),
    created_at: c.createdAt,
  };
}

const totals = (s: managed.Session) => ({
  total_governed_calls: s.totals?.governed ?? 0,
  total_observed_calls: s.totals?.observed ?? 0,
  total_denied: s.totals?.denied ?? 0,
  total_pending: s.totals?.pending ?? 0,
});

export function presentSession(s: managed.Session) {
  return {
    session_id: s.sessionId,
    anthropic_session_id: s.anthropicSessionId,
    tenant_id: s.tenantId,
    agent_id: s.agentId,
    status: s.status,
    system_prompt_hash: s.systemPromptHash,
    governance: s.governance,
    mcp_server_url: s.mcpServerUrl,
    created_at: s.createdAt,
  };
}

/** The MCP server URL a managed session's platform side connects to. */
export const sessionMcpUrl = (publicBaseUrl: string, sessionId: string) => `${publicBaseUrl.replace(/\/$/, '')}/mcp/server/sessions/${sessionId}`;

function bearerOf(req: Request): string | undefined {
  return req.header('x-api-key') ?? req.header('authorization')?.match(/^Bearer\s+(agw_.+)$/i)?.[1]?.trim();
}

const sessionParam = (req: Request) => uuidParam(req.params.session_id as string, 'Managed session');

export function managedRoutes(d: GatewayDeps): Router {
  const r = Router();

  r.post('/managed/agents', async (req, res) => {
    const { tenantId } = authOf(req);
    const b = parseWith(managedAgentSchema, req.body, 'body');
    if (b.parent_agent_id && !isUuid(b.parent_agent_id)) throw new NotFoundError(`Parent agent config ${b.parent_agent_id} not found`);
    const c = await d.managed.createAgent({
      tenantId,
      name: b.name,
      anthropicModel: b.anthropic_model ?? '',
      systemPrompt: b.system_prompt ?? '',
      allowedTools: b.allowed_tools ?? [],
      requireHumanApproval: b.require_human_approval ?? [],
      maxSessionHours: b.max_session_hours ?? 0,
      maxDailySessions: b.max_daily_sessions ?? 0,
      maxDelegationDepth: b.max_delegation_depth ?? 0,
      governanceProfileJson: JSON.stringify(b.governance_profile ?? {}),
      parentAgentId: b.parent_agent_id ?? '',
    });
    res.json(presentConfig(c));
  });

  r.get('/managed/agents', async (req, res) => {
    const { configs } = await d.managed.listAgents({ tenantId: authOf(req).tenantId });
    res.json({ configs: configs.map(presentConfig), count: configs.length });
  });

  r.get('/managed/agents/:config_id', async (req, res) => {
    const configId = uuidParam(req.params.config_id, 'Managed agent config');
    res.json(presentConfig(await d.managed.getAgent({ tenantId: authOf(req).tenantId, configId })));
  });

  r.post('/managed/sessions', async (req, res) => {
    const auth = authOf(req);
    const b = parseWith(managedSessionSchema, req.body, 'body');
    if (!isUuid(b.agent_id)) throw new NotFoundError(`Managed agent config ${b.agent_id} not found`);
    const sessionId = randomUUID();
    const config = await d.managed.getAgent({ tenantId: auth.tenantId, configId: b.agent_id });
    const mcpBearer = bearerOf(req) ?? (await d.sessions.issueMcp(auth.tenantId, sessionId, config.maxSessionHours * 3600));
    const s = await d.managed.createSession({
      tenantId: auth.tenantId,
      sessionId,
      agentId: b.agent_id,
      userMessage: b.user_message ?? '',
      environmentId: b.environment_id ?? '',
      metadataJson: JSON.stringify(b.metadata ?? {}),
      mcpBearer,
      mcpServerUrl: sessionMcpUrl(d.config.publicBaseUrl, sessionId),
    });
    res.json(presentSession(s));
  });

  r.get('/managed/sessions', async (req, res) => {
    const q = parseWith(listQuery, req.query, 'query');
    if (q.agent_id && !isUuid(q.agent_id)) return void res.json({ sessions: [], count: 0 });
    const { sessions } = await d.managed.listSessions({ tenantId: authOf(req).tenantId, status: q.status ?? '', agentId: q.agent_id ?? '' });
    res.json({
      sessions: sessions.map((s) => ({ id: s.sessionId, agent_id: s.agentId, status: s.status, ...totals(s), created_at: s.createdAt })),
      count: sessions.length,
    });
  });

  r.get('/managed/sessions/:session_id/status', async (req, res) => {
    const s = await d.managed.getSession({ tenantId: authOf(req).tenantId, sessionId: sessionParam(req) });
    res.json({
      session_id: s.sessionId,
      anthropic_session_id: s.anthropicSessionId,
      agent_id: s.agentId,
      status: s.status,
      ...totals(s),
      system_prompt_hash: s.systemPromptHash,
      created_at: s.createdAt,
      ended_at: nullIfEmpty(s.endedAt),
      ...(s.endReason ? { end_reason: s.endReason } : {}),
    });
  });

  r.get('/managed/sessions/:session_id/audit', async (req, res) => {
    const sessionId = sessionParam(req);
    const q = parseWith(auditQuery, req.query, 'query');
    const a = await d.managed.getSessionAudit({ tenantId: authOf(req).tenantId, sessionId, limit: q.limit });
    const records = a.records.map((x) => ({
      action_id: x.actionId,
      tool: x.tool,
      method: x.method,
      decision: x.decision,
      source: x.source,
      severity: x.severity,
      violations: x.violations,
      requested_at: x.requestedAt,
    }));
    res.json({ session_id: sessionId, records, count: records.length });
  });

  r.post('/managed/sessions/:session_id/interrupt', async (req, res) => {
    const sessionId = sessionParam(req);
    const b = parseWith(interruptSchema, req.body, 'body');
    const x = await d.managed.interruptSession({ tenantId: authOf(req).tenantId, sessionId, reason: b.reason, autoTriggered: b.auto_triggered });
    res.json({ status: x.status, session_id: x.sessionId, reason: x.reason, interrupted_at: x.interruptedAt, auto_triggered: x.autoTriggered, audit_action_id: x.auditActionId });
  });

  r.get('/managed/sessions/:session_id/compliance', async (req, res) => {
    const c = await d.managed.getSessionCompliance({ tenantId: authOf(req).tenantId, sessionId: sessionParam(req) });
    const s = c.session!;
    const m = c.summary!;
    res.json({
      session: { id: s.id, agent_id: s.agentId, status: s.status, system_prompt_hash: s.systemPromptHash, created_at: s.createdAt, ended_at: nullIfEmpty(s.endedAt), duration_seconds: s.durationSeconds },
      governance_profile: { allowed_tools: c.allowedTools, require_human_approval: c.requireHumanApproval },
      summary: {
        total_events: m.totalEvents,
        governed_calls: m.governedCalls,
        observed_calls: m.observedCalls,
        denied: m.denied,
        pending: m.pending,
        anomalies_detected: m.anomaliesDetected,
        denial_rate: m.denialRate,
        approvals_used: m.approvalsUsed,
      },
      timeline: c.timeline.map((t) => ({ action_id: t.actionId, tool: t.tool, decision: t.decision, source: t.source, requested_at: t.requestedAt })),
      agcs_controls: Object.fromEntries(Object.entries(c.agcsControls).sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))),
      generated_at: c.generatedAt,
    });
  });

  r.post('/managed/sessions/:session_id/replay', async (req, res) => {
    const x = await d.managed.replaySession({ tenantId: authOf(req).tenantId, sessionId: sessionParam(req) });
    res.json({
      session_id: x.sessionId,
      total_replayed: x.totalReplayed,
      consistent: x.consistent,
      changed: x.changed,
      changes: x.changes.map((c) => ({ action_id: c.actionId, tool: c.tool, original_decision: c.originalDecision, replayed_decision: c.replayedDecision, new_violations: c.newViolations })),
    });
  });

  r.get('/managed/consumers', async (req, res) => {
    const { consumers } = await d.managed.listConsumers({ tenantId: authOf(req).tenantId });
    res.json({
      consumers: consumers.map((c) => ({
        session_id: c.sessionId,
        anthropic_session_id: c.anthropicSessionId,
        tenant_id: c.tenantId,
        agent_id: c.agentId,
        status: c.status,
        events_processed: c.eventsProcessed,
        connected_since: nullIfEmpty(c.connectedSince),
      })),
      count: consumers.length,
    });
  });

  return r;
}

const sessionPath = [{ name: 'session_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }];
const notFound = { description: 'unknown, or of another tenant' };

addPaths({
  '/managed/agents': {
    post: {
      summary: 'Create a managed agent config (a root, or a delegate of parent_agent_id within every ancestor’s max_delegation_depth)',
      requestBody: jsonBody(managedAgentSchema),
      responses: { 200: { description: 'the config: {id, tenant_id, name, anthropic_model, system_prompt, allowed_tools, require_human_approval, max_session_hours, max_daily_sessions, max_delegation_depth, governance_profile, parent_agent_id, created_at}' }, 401: { description: 'Invalid API key' }, 404: { description: 'parent_agent_id unknown' }, 422: { description: 'invalid field, or delegation too deep' } },
    },
    get: { summary: 'The tenant’s managed agent configs', responses: { 200: { description: '{configs: [config], count}' } } },
  },
  '/managed/agents/{config_id}': {
    get: { parameters: [{ name: 'config_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }], responses: { 200: { description: 'the full config' }, 404: notFound } },
  },
  '/managed/sessions': {
    post: {
      summary: 'Start a governed session on the agent platform with this gateway as its remote MCP server (docs/managed.md)',
      requestBody: jsonBody(managedSessionSchema),
      responses: {
        200: { description: '{session_id, anthropic_session_id, tenant_id, agent_id, status, system_prompt_hash, governance, mcp_server_url, created_at}' },
        404: { description: 'agent config unknown' },
        422: { description: 'invalid field' },
        429: { description: 'concurrent, daily or per-agent session limit exceeded (Retry-After)' },
        502: { description: 'policy engine or agent platform unreachable' },
      },
    },
    get: {
      parameters: [
        { name: 'status', in: 'query', schema: { type: 'string', enum: [...SESSION_STATUSES] } },
        { name: 'agent_id', in: 'query', schema: { type: 'string' } },
      ],
      responses: { 200: { description: '{sessions: [{id, agent_id, status, total_governed_calls, total_observed_calls, total_denied, total_pending, created_at}], count}' } },
    },
  },
  '/managed/sessions/{session_id}/status': {
    get: { parameters: sessionPath, responses: { 200: { description: 'session_id, anthropic_session_id, agent_id, status, the four totals (live from the audit log), system_prompt_hash, created_at, ended_at' }, 404: notFound } },
  },
  '/managed/sessions/{session_id}/audit': {
    get: {
      parameters: [...sessionPath, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 200 } }],
      responses: { 200: { description: '{session_id, records: [{action_id, tool, method, decision, source, severity, violations, requested_at}], count}, oldest first' }, 404: notFound },
    },
  },
  '/managed/sessions/{session_id}/interrupt': {
    post: {
      parameters: sessionPath,
      requestBody: jsonBody(interruptSchema),
      responses: { 200: { description: '{status: interrupted, session_id, reason, interrupted_at, auto_triggered, audit_action_id}' }, 404: notFound, 409: { description: 'the session already ended' }, 422: { description: 'reason missing or longer than 1000' } },
    },
  },
  '/managed/sessions/{session_id}/compliance': {
    get: { parameters: sessionPath, responses: { 200: { description: '{session, governance_profile, summary, timeline, agcs_controls, generated_at}' }, 404: notFound } },
  },
  '/managed/sessions/{session_id}/replay': {
    post: { parameters: sessionPath, responses: { 200: { description: '{session_id, total_replayed, consistent, changed, changes: [{action_id, tool, original_decision, replayed_decision, new_violations}]}' }, 404: notFound } },
  },
  '/managed/consumers': { get: { responses: { 200: { description: '{consumers: [{session_id, anthropic_session_id, tenant_id, agent_id, status, events_processed, connected_since}], count}' } } } },
  '/mcp/server/sessions/{session_id}': {
    post: {
      summary: 'A managed session’s remote MCP server (Streamable HTTP): tools/list lists the config’s allowed_tools; tools/call runs the governance pipeline (source mcp_governed, require_human_approval patterns escalate)',
      parameters: sessionPath,
      responses: { 200: { description: 'JSON-RPC response' }, 401: { description: 'Invalid API key' }, 403: { description: 'source not in MCP_IP_ALLOWLIST, or a token scoped to another session' }, 404: notFound, 409: { description: 'the session is not active' } },
    },
  },
});
