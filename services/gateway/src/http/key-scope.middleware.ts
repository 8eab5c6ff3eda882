/**
 * What an `agent`-scoped API key may reach (docs/auth.md, "Scoped keys"): the governed tool call, the MCP
 * server, the status of its own queued actions and who it is. Everything else (approvals, audit, settings,
 * credentials, keys, sessions...) is a 403 naming the rule, before any route runs, so a route added later is
 * closed to agent keys unless it is listed here.
 */
import type { NextFunction, Request, Response } from 'express';
import { ForbiddenError } from '@agw/shared';

/** [method, path pattern] an agent key may call (paths relative to /api). */
export const AGENT_KEY_ROUTES: ReadonlyArray<readonly [string, RegExp]> = [
  ['POST', /^\/mcp\/tools\/call\/?$/],
  ['POST', /^\/mcp\/server\/?$/],
  ['POST', /^\/mcp\/server\/sessions\/[^/]+\/?$/],
  ['GET', /^\/actions\/[^/]+\/?$/],
  ['GET', /^\/auth\/me\/?$/],
];

export function agentKeyAllows(method: string, path: string): boolean {
  return AGENT_KEY_ROUTES.some(([m, re]) => m === method && re.test(path));
}

/** The one resource an MCP client's OAuth access token is issued for (RFC 8707 audience). */
export const OAUTH_RESOURCE_PATH = /^\/mcp\/server\/?$/;

export function keyScopeGuard(req: Request, _res: Response, next: NextFunction): void {
  if (req.auth?.method === 'oauth' && !(req.method === 'POST' && OAUTH_RESOURCE_PATH.test(req.path))) {
    throw new ForbiddenError(`This access token is an MCP client's: it is bound to the MCP server (POST /api/mcp/server) and acts as an agent, never on ${req.method} /api${req.path}`);
  }
  if (req.auth?.keyScope === 'agent' && !agentKeyAllows(req.method, req.path)) {
    throw new ForbiddenError(
      `This API key is agent-scoped: it may call tools (POST /api/mcp/tools/call), the MCP server (POST /api/mcp/server) and read its own actions (GET /api/actions/{action_id}); ${req.method} /api${req.path} needs the tenant API key or a signed-in user`,
    );
  }
  next();
}
