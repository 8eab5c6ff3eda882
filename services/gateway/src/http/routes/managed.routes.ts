/**
 * Managed agents and sessions (`/api/managed/*`): validation (422 with `loc`), then one call to the managed
 * service over gRPC, then the spec's response shape. Session creation hands the platform a bearer for our
 * MCP server: the caller's API key (spec), or, for a signed-in user, a token scoped to that session's MCP
 * server that expires with it.
 */
import { randomUUID } from 'node:crypto';
import type { managed } from '@agw/proto';
import { NotFoundError, jsonField, jsonOf, objectFromAnswerJson } from '@agw/shared';
import { type Request, Router } from 'express';
import { z } from 'zod';
import type { ManagedFeature } from '../../features/managed.feature';
import { addPaths, jsonBody, pathParam, queryParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { jsonRpcSchema, mcpTransportErrors } from '../../mcp/mcp.routes';
import { askToolsOf, mcpToolsOf } from '../../mcp/governed-tools';
import { isUuid, orNull, uuidParam } from '../params';
import { pick } from '../present';
import { actsForOf, authOf } from '../request-context';
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

const configSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    anthropic_model: z.string(),
    system_prompt: z.string().nullable(),
    allowed_tools: z.array(z.string()),
    require_human_approval: z.array(z.string()),
    max_session_hours: z.number(),
    max_daily_sessions: z.number().int().nullable(),
    max_delegation_depth: z.number().int(),
    governance_profile: z.record(z.string(), z.unknown()),
    parent_agent_id: z.string().nullable(),
    created_at: timestamp(),
  })
  .meta({ id: 'ManagedAgentConfig' });
const configsResponse = z.object({ configs: z.array(configSchema), count: z.number().int() });
const sessionSchema = z
  .object({
    session_id: z.string(),
    anthropic_session_id: z.string(),
    tenant_id: z.string(),
    agent_id: z.string(),
    status: z.string(),
    system_prompt_hash: z.string(),
    governance: z.string(),
    mcp_server_url: z.string(),
    created_at: timestamp(),
  })
  .meta({ id: 'ManagedSession' });
const totalsShape = { total_governed_calls: z.number().int(), total_observed_calls: z.number().int(), total_denied: z.number().int(), total_pending: z.number().int() };
const sessionsResponse = z.object({
  sessions: z.array(z.object({ id: z.string(), agent_id: z.string(), status: z.string(), ...totalsShape, created_at: timestamp() })),
  count: z.number().int(),
});
const statusResponse = z.object({
  session_id: z.string(),
  anthropic_session_id: z.string(),
  agent_id: z.string(),
  status: z.string(),
  ...totalsShape,
  system_prompt_hash: z.string(),
  created_at: timestamp(),
  ended_at: timestamp().nullable(),
  end_reason: z.string().optional(),
});
const sessionAuditResponse = z.object({
  session_id: z.string(),
  records: z.array(
    z.object({ action_id: z.string(), tool: z.string(), method: z.string(), decision: z.string(), source: z.string(), severity: z.string(), violations: z.array(z.string()), requested_at: timestamp() }),
  ),
  count: z.number().int(),
});
const interruptResponse = z.object({ status: z.string(), session_id: z.string(), reason: z.string(), interrupted_at: timestamp(), auto_triggered: z.boolean(), audit_action_id: z.string() });
const complianceResponse = z.object({
  session: z.object({ id: z.string(), agent_id: z.string(), status: z.string(), system_prompt_hash: z.string(), created_at: timestamp(), ended_at: timestamp().nullable(), duration_seconds: z.number() }),
  governance_profile: z.object({ allowed_tools: z.array(z.string()), require_human_approval: z.array(z.string()) }),
  summary: z.object({
    total_events: z.number().int(),
    governed_calls: z.number().int(),
    observed_calls: z.number().int(),
    denied: z.number().int(),
    pending: z.number().int(),
    anomalies_detected: z.number().int(),
    denial_rate: z.string().meta({ description: 'percent, e.g. "12.5%"' }),
    approvals_used: z.number().int(),
  }),
  timeline: z.array(z.object({ action_id: z.string(), tool: z.string(), decision: z.string(), source: z.string(), requested_at: timestamp() })),
  agcs_controls: z.record(z.string(), z.string()),
  generated_at: timestamp(),
});
const replayResponse = z.object({
  session_id: z.string(),
  total_replayed: z.number().int(),
  consistent: z.number().int(),
  changed: z.number().int(),
  changes: z.array(z.object({ action_id: z.string(), tool: z.string(), original_decision: z.string(), replayed_decision: z.string(), new_violations: z.array(z.string()) })),
});
const consumersResponse = z.object({
  consumers: z.array(
    z.object({ session_id: z.string(), anthropic_session_id: z.string(), tenant_id: z.string(), agent_id: z.string(), status: z.string(), events_processed: z.number().int(), connected_since: timestamp().nullable() }),
  ),
  count: z.number().int(),
});

export function presentConfig(c: managed.AgentConfig): z.infer<typeof configSchema> {
  return {
    id: c.id,
    tenant_id: c.tenant_id,
    name: c.name,
    anthropic_model: c.anthropic_model,
    system_prompt: orNull(c.system_prompt),
    allowed_tools: c.allowed_tools,
    require_human_approval: c.require_human_approval,
    max_session_hours: c.max_session_hours,
    max_daily_sessions: c.max_daily_sessions || null,
    max_delegation_depth: c.max_delegation_depth,
    governance_profile: objectFromAnswerJson(jsonOf(c, 'governance_profile'), 'governance_profile'),
    parent_agent_id: orNull(c.parent_agent_id),
    created_at: c.created_at,
  };
}

const totals = (s: managed.Session) => ({
  total_governed_calls: s.totals?.governed ?? 0,
  total_observed_calls: s.totals?.observed ?? 0,
  total_denied: s.totals?.denied ?? 0,
  total_pending: s.totals?.pending ?? 0,
});

export function presentSession(s: managed.Session): z.infer<typeof sessionSchema> {
  return {
    session_id: s.session_id,
    anthropic_session_id: s.anthropic_session_id,
    tenant_id: s.tenant_id,
    agent_id: s.agent_id,
    status: s.status,
    system_prompt_hash: s.system_prompt_hash,
    governance: s.governance,
    mcp_server_url: s.mcp_server_url,
    created_at: s.created_at,
  };
}

/** The MCP server URL a managed session's platform side connects to. */
export const sessionMcpUrl = (publicBaseUrl: string, sessionId: string) => `${publicBaseUrl.replace(/\/$/, '')}/mcp/server/sessions/${sessionId}`;

function bearerOf(req: Request): string | undefined {
  return req.header('x-api-key') ?? req.header('authorization')?.match(/^Bearer\s+(agw_.+)$/i)?.[1]?.trim();
}

const sessionParam = (req: Request) => uuidParam(req.params.session_id as string, 'Managed session');

export function managedRoutes(d: ManagedFeature): Router {
  const r = Router();

  r.post('/managed/agents', async (req, res) => {
    const { tenantId } = authOf(req);
    const b = parseWith(managedAgentSchema, req.body, 'body');
    if (b.parent_agent_id && !isUuid(b.parent_agent_id)) throw new NotFoundError(`Parent agent config ${b.parent_agent_id} not found`);
    const c = await d.managed.createAgent({
      tenant_id: tenantId,
      name: b.name,
      anthropic_model: b.anthropic_model ?? '',
      system_prompt: b.system_prompt ?? '',
      allowed_tools: b.allowed_tools ?? [],
      require_human_approval: b.require_human_approval ?? [],
      max_session_hours: b.max_session_hours ?? 0,
      max_daily_sessions: b.max_daily_sessions ?? 0,
      max_delegation_depth: b.max_delegation_depth ?? 0,
      ...jsonField('governance_profile', b.governance_profile ?? {}),
      parent_agent_id: b.parent_agent_id ?? '',
    });
    reply(res, configSchema, presentConfig(c));
  });

  r.get('/managed/agents', async (req, res) => {
    const { configs } = await d.managed.listAgents({ tenant_id: authOf(req).tenantId });
    reply(res, configsResponse, { configs: configs.map(presentConfig), count: configs.length });
  });

  r.get('/managed/agents/:config_id', async (req, res) => {
    const configId = uuidParam(req.params.config_id, 'Managed agent config');
    reply(res, configSchema, presentConfig(await d.managed.getAgent({ tenant_id: authOf(req).tenantId, config_id: configId })));
  });

  r.post('/managed/sessions', async (req, res) => {
    const auth = authOf(req);
    const b = parseWith(managedSessionSchema, req.body, 'body');
    if (!isUuid(b.agent_id)) throw new NotFoundError(`Managed agent config ${b.agent_id} not found`);
    const sessionId = randomUUID();
    const config = await d.managed.getAgent({ tenant_id: auth.tenantId, config_id: b.agent_id });
    // the session acts for the member who started it: a signed-in human (in the session's token), or the
    // issuer of the API key the platform is handed (the pipeline finds a key's owner)
    const mcpBearer = bearerOf(req) ?? (await d.sessions.issueMcp(auth.tenantId, sessionId, config.max_session_hours * 3600, actsForOf(auth)));
    // the session's tools that may need a human: the platform asks before calling them
    const askTools = config.require_human_approval.length ? askToolsOf(await mcpToolsOf(d, auth.tenantId, config.allowed_tools), config.require_human_approval) : [];
    const s = await d.managed.createSession({
      tenant_id: auth.tenantId,
      session_id: sessionId,
      agent_id: b.agent_id,
      user_message: b.user_message ?? '',
      environment_id: b.environment_id ?? '',
      ...jsonField('metadata', b.metadata ?? {}),
      mcp_bearer: mcpBearer,
      mcp_server_url: sessionMcpUrl(d.config.publicBaseUrl, sessionId),
      ask_tools: askTools,
    });
    reply(res, sessionSchema, presentSession(s));
  });

  r.get('/managed/sessions', async (req, res) => {
    const q = parseWith(listQuery, req.query, 'query');
    if (q.agent_id && !isUuid(q.agent_id)) return void reply(res, sessionsResponse, { sessions: [], count: 0 });
    const { sessions } = await d.managed.listSessions({ tenant_id: authOf(req).tenantId, status: q.status ?? '', agent_id: q.agent_id ?? '' });
    reply(res, sessionsResponse, {
      sessions: sessions.map((s) => ({ id: s.session_id, agent_id: s.agent_id, status: s.status, ...totals(s), created_at: s.created_at })),
      count: sessions.length,
    });
  });

  r.get('/managed/sessions/:session_id/status', async (req, res) => {
    const s = await d.managed.getSession({ tenant_id: authOf(req).tenantId, session_id: sessionParam(req) });
    reply(res, statusResponse, {
      ...pick(s, ['session_id', 'anthropic_session_id', 'agent_id', 'status']),
      ...totals(s),
      ...pick(s, ['system_prompt_hash', 'created_at']),
      ended_at: orNull(s.ended_at),
      ...(s.end_reason ? { end_reason: s.end_reason } : {}),
    });
  });

  r.get('/managed/sessions/:session_id/audit', async (req, res) => {
    const sessionId = sessionParam(req);
    const q = parseWith(auditQuery, req.query, 'query');
    const a = await d.managed.getSessionAudit({ tenant_id: authOf(req).tenantId, session_id: sessionId, limit: q.limit });
    const records = a.records.map((x) => pick(x, ['action_id', 'tool', 'method', 'decision', 'source', 'severity', 'violations', 'requested_at']));
    reply(res, sessionAuditResponse, { session_id: sessionId, records, count: records.length });
  });

  r.post('/managed/sessions/:session_id/interrupt', async (req, res) => {
    const sessionId = sessionParam(req);
    const b = parseWith(interruptSchema, req.body, 'body');
    const x = await d.managed.interruptSession({ tenant_id: authOf(req).tenantId, session_id: sessionId, reason: b.reason, auto_triggered: b.auto_triggered });
    reply(res, interruptResponse, { status: x.status, session_id: x.session_id, reason: x.reason, interrupted_at: x.interrupted_at, auto_triggered: x.auto_triggered, audit_action_id: x.audit_action_id });
  });

  r.get('/managed/sessions/:session_id/compliance', async (req, res) => {
    const c = await d.managed.getSessionCompliance({ tenant_id: authOf(req).tenantId, session_id: sessionParam(req) });
    const s = c.session!;
    const m = c.summary!;
    reply(res, complianceResponse, {
      session: { id: s.id, agent_id: s.agent_id, status: s.status, system_prompt_hash: s.system_prompt_hash, created_at: s.created_at, ended_at: orNull(s.ended_at), duration_seconds: s.duration_seconds },
      governance_profile: { allowed_tools: c.allowed_tools, require_human_approval: c.require_human_approval },
      summary: pick(m, ['total_events', 'governed_calls', 'observed_calls', 'denied', 'pending', 'anomalies_detected', 'denial_rate', 'approvals_used']),
      timeline: c.timeline.map((t) => ({ action_id: t.action_id, tool: t.tool, decision: t.decision, source: t.source, requested_at: t.requested_at })),
      agcs_controls: Object.fromEntries(Object.entries(c.agcs_controls).sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))),
      generated_at: c.generated_at,
    });
  });

  r.post('/managed/sessions/:session_id/replay', async (req, res) => {
    const x = await d.managed.replaySession({ tenant_id: authOf(req).tenantId, session_id: sessionParam(req) });
    reply(res, replayResponse, {
      ...pick(x, ['session_id', 'total_replayed', 'consistent', 'changed']),
      changes: x.changes.map((c) => ({ action_id: c.action_id, tool: c.tool, original_decision: c.original_decision, replayed_decision: c.replayed_decision, new_violations: c.new_violations })),
    });
  });

  r.get('/managed/consumers', async (req, res) => {
    const { consumers } = await d.managed.listConsumers({ tenant_id: authOf(req).tenantId });
    reply(res, consumersResponse, {
      consumers: consumers.map((c) => ({
        ...pick(c, ['session_id', 'anthropic_session_id', 'tenant_id', 'agent_id', 'status', 'events_processed']),
        connected_since: orNull(c.connected_since),
      })),
      count: consumers.length,
    });
  });

  return r;
}

const sessionPath = [pathParam('session_id', { type: 'string', format: 'uuid' })];
const notFound = errors[404]('unknown, or of another tenant');

addPaths({
  '/managed/agents': {
    post: {
      summary: 'Create a managed agent config (a root, or a delegate of parent_agent_id within every ancestor’s max_delegation_depth)',
      requestBody: jsonBody(managedAgentSchema),
      responses: { 200: response('the config', configSchema), 404: errors[404]('parent_agent_id unknown'), 422: errors[422]('invalid field, or delegation too deep') },
    },
    get: { summary: 'The tenant’s managed agent configs', responses: { 200: response('configs', configsResponse) } },
  },
  '/managed/agents/{config_id}': { get: { parameters: [pathParam('config_id', { type: 'string', format: 'uuid' })], responses: { 200: response('the full config', configSchema), 404: notFound } } },
  '/managed/sessions': {
    post: {
      summary: 'Start a governed session on the agent platform with this gateway as its remote MCP server (docs/managed.md)',
      requestBody: jsonBody(managedSessionSchema),
      responses: {
        200: response('the session', sessionSchema),
        404: errors[404]('agent config unknown'),
        422: errors[422](),
        429: errors[429]('concurrent, daily or per-agent session limit exceeded (Retry-After)'),
        502: errors[502]('policy engine or agent platform unreachable'),
      },
    },
    get: {
      parameters: [
        queryParam('status', { type: 'string', enum: [...SESSION_STATUSES] }),
        queryParam('agent_id'),
      ],
      responses: { 200: response('sessions', sessionsResponse), 422: errors[422]() },
    },
  },
  '/managed/sessions/{session_id}/status': { get: { parameters: sessionPath, responses: { 200: response('the session with its live totals', statusResponse), 404: notFound } } },
  '/managed/sessions/{session_id}/audit': {
    get: {
      parameters: [...sessionPath, queryParam('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 200 })],
      responses: { 200: response('the session’s records, oldest first', sessionAuditResponse), 404: notFound, 422: errors[422]() },
    },
  },
  '/managed/sessions/{session_id}/interrupt': {
    post: {
      parameters: sessionPath,
      requestBody: jsonBody(interruptSchema),
      responses: { 200: response('interrupted', interruptResponse), 404: notFound, 409: errors[409]('the session already ended'), 422: errors[422]('reason missing or longer than 1000') },
    },
  },
  '/managed/sessions/{session_id}/compliance': { get: { parameters: sessionPath, responses: { 200: response('the compliance view', complianceResponse), 404: notFound } } },
  '/managed/sessions/{session_id}/replay': { post: { parameters: sessionPath, responses: { 200: response('the replay', replayResponse), 404: notFound } } },
  '/managed/consumers': { get: { responses: { 200: response('event consumers', consumersResponse) } } },
  '/mcp/server/sessions/{session_id}': {
    post: {
      summary: 'A managed session’s remote MCP server (Streamable HTTP): tools/list lists the config’s allowed_tools; tools/call runs the governance pipeline (source mcp_governed, require_human_approval patterns escalate)',
      parameters: sessionPath,
      responses: {
        200: response('JSON-RPC response', jsonRpcSchema),
        ...mcpTransportErrors,
        403: errors[403]('source not in MCP_IP_ALLOWLIST, or a token scoped to another session'),
        404: notFound,
        409: errors[409]('the session is not active'),
      },
    },
  },
});
