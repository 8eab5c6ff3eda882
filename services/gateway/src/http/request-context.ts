/** What the gateway attaches to a request: its id and, once authenticated, who is calling. */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Role } from './permissions';

export interface AuthContext {
  tenantId: string;
  /** 'api_key', 'jwt', 'mcp_session' (a token good for one managed session's MCP server only) or 'oauth' (an MCP client's access token) */
  method: 'api_key' | 'jwt' | 'mcp_session' | 'oauth';
  /** an OAuth caller's agent identity (the agent_id of its records) and client */
  agentName?: string;
  oauthClientId?: string;
  /** the managed session an 'mcp_session' token is scoped to */
  mcpSessionId?: string;
  userId?: string;
  email?: string;
  isAdmin: boolean;
  /** a signed-in member's role in the tenant (http/permissions.ts); absent for machine credentials */
  role?: Role;
  /** an API key's scope (docs/auth.md, "Scoped keys"): an `agent` key reaches tool calls, the MCP server and its own actions only */
  keyScope?: 'tenant' | 'agent';
  /** SHA-256 of the API key (identifies the key, e.g. the one that queued an action) */
  keyHash?: string;
  /** a session token that POST /auth/session made from an API key: not a human log-in */
  viaApiKey?: boolean;
  /** an OAuth MCP client: the human who consented; a managed session's token: the member who started it (their calls act for them) */
  actsForUserId?: string;
}

/**
 * The human a caller's governed calls act for (a per_user upstream uses their connection,
 * docs/federation.md): a signed-in human themself, an OAuth MCP client's consenting human, a managed
 * session's starting member (its session-scoped token); an API key's issuer is found by the pipeline.
 */
export function actsForOf(auth: AuthContext | undefined): string | undefined {
  if (!auth) return undefined;
  if (auth.method === 'jwt' && !auth.viaApiKey) return auth.userId;
  if (auth.method === 'oauth' || auth.method === 'mcp_session') return auth.actsForUserId;
  return undefined;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      auth?: AuthContext;
    }
  }
}

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.header('x-request-id');
  req.id = given && /^[A-Za-z0-9._-]{1,128}$/.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', req.id);
  next();
}

/** The authenticated caller; throws if a route forgot its auth middleware. */
export function authOf(req: Request): AuthContext {
  if (!req.auth) throw new Error('route is missing authentication middleware');
  return req.auth;
}
