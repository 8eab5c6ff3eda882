/**
 * What an `agent`-scoped API key may reach (docs/auth.md, "Scoped keys"): the governed tool call, the MCP
 * server, the status of its own queued actions and who it is. Everything else (approvals, audit, settings,
 * credentials, keys, sessions...) is a 403 naming the rule, before any route runs, so a route added later is
 * closed to agent keys unless it is listed here.
 *
 * An MCP client's OAuth access token (`mcpat_…`) reaches less: the MCP server (`POST /api/mcp/server`, its
 * RFC 8707 audience) and the status of the actions its own grant queued (`GET /api/actions/{action_id}`,
 * which an escalated call tells the client to poll).
 *
 * `GET` and `DELETE` on the MCP server's endpoints (`/api/mcp/server`, `/sessions/{id}`, `/upstreams/{name}`) are a transport question, not a scope one: the
 * Streamable HTTP transport requires a server without an SSE stream to answer them `405 Method Not
 * Allowed`, and clients of the 2025 revisions send that GET right after `initialize`. So every credential
 * that may use the MCP server gets the transport's 405 (JSON-RPC error, `Allow: POST`) here, before the
 * scope check, as the tenant key gets it from the route.
 */
import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError } from '@agw/shared';

/** [method, path pattern] an agent key may call (paths relative to /api). */
export const AGENT_KEY_ROUTES: ReadonlyArray<readonly [string, RegExp]> = [
  ['POST', /^\/mcp\/tools\/call\/?$/],
  ['POST', /^\/mcp\/server\/?$/],
  ['POST', /^\/mcp\/server\/sessions\/[^/]+\/?$/],
  ['POST', /^\/mcp\/server\/upstreams\/[^/]+\/?$/],
  ['GET', /^\/actions\/[^/]+\/?$/],
  ['GET', /^\/auth\/me\/?$/],
];

export function agentKeyAllows(method: string, path: string): boolean {
  return AGENT_KEY_ROUTES.some(([m, re]) => m === method && re.test(path));
}

/** The one resource an MCP client's OAuth access token is issued for (RFC 8707 audience). */
export const OAUTH_RESOURCE_PATH = /^\/mcp\/server\/?$/;

/** [method, path pattern] an MCP client's OAuth access token may call (paths relative to /api). */
export const OAUTH_TOKEN_ROUTES: ReadonlyArray<readonly [string, RegExp]> = [
  ['POST', OAUTH_RESOURCE_PATH],
  // the actions its own grant queued (the route answers 404 for any other: approvals.routes.ts)
  ['GET', /^\/actions\/[^/]+\/?$/],
];

export function oauthTokenAllows(method: string, path: string): boolean {
  return OAUTH_TOKEN_ROUTES.some(([m, re]) => m === method && re.test(path));
}

/** The MCP server's endpoints (the tenant's, a managed session's, one upstream's). */
const MCP_SERVER_PATH = /^\/mcp\/server(\/(sessions|upstreams)\/[^/]+)?\/?$/;

/** The Streamable HTTP transport's answer to GET (no SSE stream is offered) and DELETE (no session to end). */
export function mcpMethodNotAllowed(res: Response): void {
  res.status(405).set('allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless, use POST' }, id: null });
}

export function keyScopeGuard(req: Request, res: Response, next: NextFunction): void {
  if ((req.method === 'GET' || req.method === 'DELETE') && MCP_SERVER_PATH.test(req.path) && (req.auth?.method === 'oauth' || req.auth?.keyScope === 'agent')) {
    return mcpMethodNotAllowed(res);
  }
  if (req.auth?.method === 'oauth' && !oauthTokenAllows(req.method, req.path)) {
    throw new ForbiddenError(
      `This access token is an MCP client's: it is bound to the MCP server (POST /api/mcp/server), acts as an agent and may read the actions it queued (GET /api/actions/{action_id}), never ${req.method} /api${req.path}`,
    );
  }
  if (req.auth?.keyScope === 'agent' && !agentKeyAllows(req.method, req.path)) {
    throw new ForbiddenError(
      `This API key is agent-scoped: it may call tools (POST /api/mcp/tools/call), the MCP server (POST /api/mcp/server) and read its own actions (GET /api/actions/{action_id}); ${req.method} /api${req.path} needs the tenant API key or a signed-in user`,
    );
  }
  next();
}
