/** What the gateway attaches to a request: its id and, once authenticated, who is calling. */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { AuthContext } from '../tenants/auth-context';

export type { AuthContext };

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
