/**
 * The remote MCP server (Streamable HTTP, stateless: one MCP server instance per HTTP request, so any
 * gateway replica answers any request) at /api/mcp/server, authenticated like every tenant route (an
 * external agent platform sends the tenant API key as `Authorization: Bearer`). Optional source-IP
 * allowlist: MCP_IP_ALLOWLIST. GET /api/mcp/server/health is public.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { ProtocolError, Server } from '@modelcontextprotocol/server';
import { type Request, type Response, Router } from 'express';
import { ConflictError, ForbiddenError, NotFoundError } from '@agw/shared';
import type { McpDeps } from './mcp-deps';
import { z } from 'zod';
import { addPaths, pathParam } from '../openapi/openapi';
import { errorSchema, errors, reply, response } from '../openapi/schema';
import { actsForOf, authOf } from '../http/request-context';
import { EXTERNAL_MS } from '../http/admission';
import { UPSTREAM_NAME, UPSTREAM_NAME_PATTERN } from '../federation/upstream-names';
import { nameParam, uuidParam } from '../http/params';
import { answerModern, classify } from './modern-revision';
import { TASKS_EXTENSION } from './approval-rounds';
import { type McpToolResult, type McpTools, type SessionScope, mcpToolsOf, upstreamTools } from './governed-tools';
import { approvalRoundsOf, mcpCallHandlers } from './mcp-calls';
import { listedTools } from './listed-tools';
import { FEDERATED_CAPABILITIES, FederatedMethods } from './federated-resources';
import { LazySseAnswer, notificationsFor, relayWishOf } from './call-notifications';

export const MCP_SERVER_INFO = { name: 'agw-governance-gateway', version: '1.0.0' };

const mcpHealthSchema = z.object({ status: z.literal('ok'), transport: z.literal('streamable-http'), endpoint: z.string(), server: z.object({ name: z.string(), version: z.string() }) });
/** JSON-RPC 2.0 (MCP) messages: described as JSON-RPC, their content is MCP's (modelcontextprotocol.io). */
export const jsonRpcSchema = z.looseObject({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number(), z.null()]).optional() }).meta({ id: 'JsonRpcMessage' });
/** What the MCP transport itself refuses (a JSON-RPC error body): a bad message (400), an Accept header without both JSON and SSE (406). */
export const mcpTransportErrors = {
  400: response('the MCP transport refuses the message (JSON-RPC error; revision 2026-07-28: -32020 HeaderMismatch, -32022 UnsupportedProtocolVersion)', jsonRpcSchema),
  404: response('revision 2026-07-28: a method this server does not implement (JSON-RPC -32601)', jsonRpcSchema),
  406: response('Accept must name both application/json and text/event-stream (JSON-RPC error)', jsonRpcSchema),
};

addPaths({
  '/mcp/server': {
    post: {
      summary: 'Remote MCP server (Streamable HTTP, JSON-RPC 2.0): tools/list lists the tenant’s governed tools; tools/call runs the governance pipeline',
      responses: { 200: response('JSON-RPC response', jsonRpcSchema), 202: { description: 'a JSON-RPC notification accepted (no body)' }, ...mcpTransportErrors, 503: errors[503]('overloaded: the gateway’s in-flight limits (Retry-After); nothing was done'), 403: response('source address not in MCP_IP_ALLOWLIST ({detail}), or an Origin / Host refused (JSON-RPC error, docs/mcp.md)', z.union([errorSchema, jsonRpcSchema])) },
    },
  },
  '/mcp/server/upstreams/{name}': {
    post: {
      summary: 'One upstream’s own MCP server (Streamable HTTP): its tools under their own names (no <upstream>__ prefix), every tools/call governed as through /mcp/server',
      parameters: [pathParam('name', { type: 'string', pattern: UPSTREAM_NAME_PATTERN })],
      responses: {
        200: response('JSON-RPC response', jsonRpcSchema),
        202: { description: 'a JSON-RPC notification accepted (no body)' },
        ...mcpTransportErrors,
        403: response('source address not in MCP_IP_ALLOWLIST, or an Origin / Host refused', z.union([errorSchema, jsonRpcSchema])),
        404: response('no upstream of that name (or revision 2026-07-28: a method this server does not implement, JSON-RPC -32601)', z.union([errorSchema, jsonRpcSchema])),
        503: errors[503]('overloaded: the gateway’s in-flight limits (Retry-After); nothing was done'),
      },
    },
  },
  '/mcp/server/health': { get: { security: [], summary: 'Health of the MCP server', responses: { 200: response('the MCP server', mcpHealthSchema) } } },
});

/** A BlockList of the allowed sources (IPs or CIDRs), or undefined for "any". */
export function parseAllowlist(spec: string): BlockList | undefined {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!entries.length) return undefined;
  const list = new BlockList();
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    const type = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (bits) list.addSubnet(addr, Number(bits), type);
    else list.addAddress(addr, type);
  }
  return list;
}

/**
 * MCP_IP_ALLOWLIST as a check of one request: its source is `req.ip`, the address `trust proxy`
 * (TRUST_PROXY) makes of the socket and X-Forwarded-For, never an entry the client wrote itself.
 */
export function mcpSourceCheck(spec: string): (req: Request) => void {
  const allow = parseAllowlist(spec);
  return (req) => {
    const ip = (req.ip ?? '').replace(/^::ffff:/, '');
    if (allow && !allow.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4')) throw new ForbiddenError('This source address may not use the MCP server (MCP_IP_ALLOWLIST)');
  };
}

export function mcpPublicRoutes(): Router {
  const r = Router();
  r.get('/mcp/server/health', (_req, res) => {
    reply(res, mcpHealthSchema, { status: 'ok', transport: 'streamable-http', endpoint: '/api/mcp/server', server: MCP_SERVER_INFO });
  });
  return r;
}

export function mcpRoutes(d: McpDeps): Router {
  const r = Router();
  const checkSource = mcpSourceCheck(d.config.mcpIpAllowlist);
  const rounds = approvalRoundsOf(d);
  /** One stateless MCP server for this request: its federated and credential tools, bound to the pipeline. */
  const serve = async (req: Request, res: Response, tools: McpTools, tenantId: string, session?: SessionScope) => {
    // each step's ms: a brokered upstream's execution is the tool's time, not the gateway's (http/admission.ts)
    const timings: Record<string, number> = {};
    res.once('finish', () => timings.broker && (res.locals[EXTERNAL_MS] = timings.broker));
    // the client closing its request before the answer (cancellation, in either revision) cancels a federated call at its upstream
    const closed = new AbortController();
    res.once('close', () => !res.writableFinished && closed.abort());
    const caller = { apiKeyHash: req.auth?.keyHash, agentKey: req.auth?.keyScope === 'agent', agentId: req.auth?.agentName, actsFor: actsForOf(req.auth), timings, signal: closed.signal };
    const calls = mcpCallHandlers(d, rounds, tools, tenantId, caller, session);
    // resources, prompts and completions of the tenant's upstreams (federated-resources.ts)
    const federatedMethods = new FederatedMethods({ d, tenantId, allowed: tools.allowed, upstream: tools.upstream, session, caller, rounds });
    // protocol revision 2026-07-28 (stateless, no initialize): its HTTP rules in modern-revision.ts
    const era = classify(req.headers, req.body);
    if (era.kind === 'reject') return void res.status(era.status).json(era.body);
    if (era.kind === 'modern') {
      // a call that asks for its upstream's progress or log messages: they go out on an SSE answer
      const wish = /text\/event-stream/.test(req.headers.accept ?? '') ? relayWishOf(era.request.method, era.request.params, true) : undefined;
      const answer = new LazySseAnswer(res);
      const notifications = wish ? notificationsFor(wish, (n) => answer.notify(n)) : undefined;
      const out = await answerModern(era.request, {
        serverInfo: MCP_SERVER_INFO,
        capabilities: { tools: {}, ...FEDERATED_CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } },
        listTtlMs: 30_000,
        listTools: async () => listedTools(tools, session),
        callTool: (name, args, round) => calls.callTool(name, args, round, notifications),
        tasks: calls.tasks,
        other: (method, params) => federatedMethods.answer(method, params),
      }).catch((e: unknown) => {
        if (!(e instanceof ProtocolError)) throw e;
        return { status: 200, body: { jsonrpc: '2.0', id: era.request.id ?? null, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } } };
      });
      return answer.finish(out.status, out.body);
    }
    const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {}, logging: {}, ...FEDERATED_CAPABILITIES } });
    federatedMethods.register(server);
    server.setRequestHandler('tools/list', async () => ({ tools: listedTools(tools, session) }));
    // a call with a progressToken is answered on an SSE stream, which carries its upstream's progress and log messages
    const wish = relayWishOf((req.body as { method?: unknown } | undefined)?.method, (req.body as { params?: unknown } | undefined)?.params, false);
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const notifications = wish ? notificationsFor(wish, (n) => void ctx.mcpReq.notify(n as never).catch(() => undefined)) : undefined;
      return (await calls.callTool(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, undefined, notifications)) as McpToolResult as never;
    });
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wish });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // the SDK reads req.auth as its own AuthInfo; ours is the tenant context, so hand it the plain message
    await transport.handleRequest(req as unknown as IncomingMessage, res, req.body);
  };
  const toolsOf = (tenantId: string, allowed?: string[]) => mcpToolsOf(d, tenantId, allowed);
  r.post('/mcp/server', async (req: Request, res: Response) => {
    checkSource(req);
    const { tenantId } = authOf(req);
    await serve(req, res, await toolsOf(tenantId), tenantId);
  });
  // one upstream's own MCP server: its tools under their own names (what an MCP client or the conformance
  // suite expects of that server), every call governed as through /mcp/server
  r.post('/mcp/server/upstreams/:name', async (req: Request, res: Response) => {
    checkSource(req);
    const { tenantId } = authOf(req);
    const name = nameParam(req.params.name as string, 'Upstream', UPSTREAM_NAME);
    // an unknown upstream is a 404 (the vault's NOT_FOUND), never an empty server
    await d.federation.client.getUpstream({ tenant_id: tenantId, name, tool_approval: '' });
    await serve(req, res, upstreamTools(await toolsOf(tenantId), name), tenantId);
  });
  // a managed session's MCP server: its config's allowed_tools, every call recorded with the session id
  r.post('/mcp/server/sessions/:session_id', async (req: Request, res: Response) => {
    checkSource(req);
    const { tenantId } = authOf(req);
    const sessionId = uuidParam(req.params.session_id as string, 'Managed session');
    const g = await d.managed.getSessionGovernance({ tenant_id: tenantId, session_id: sessionId });
    if (g.status !== 'active') throw new ConflictError(`Managed session ${sessionId} is ${g.status}: its MCP server takes no more calls`);
    await serve(req, res, await toolsOf(tenantId, g.allowed_tools), tenantId, { sessionId, agentId: g.agent_id, approvalPatterns: g.require_human_approval });
  });
  const notAllowed = (_req: Request, res: Response) => {
    res.status(405).set('allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, use POST' }, id: null });
  };
  r.get(['/mcp/server', '/mcp/server/sessions/:session_id', '/mcp/server/upstreams/:name'], notAllowed);
  r.delete(['/mcp/server', '/mcp/server/sessions/:session_id', '/mcp/server/upstreams/:name'], notAllowed);
  return r;
}
