/**
 * Authentication of tenant requests: `X-API-Key: <key>`, or `Authorization: Bearer <token>` where the
 * token is a session JWT, (as external agent platforms send it to the MCP server) the API key itself, or
 * an MCP client's OAuth access token (`mcpat_…`, good for the MCP server only, acting as an agent-scoped
 * key named by its grant; good only at the public origin it was issued for).
 * Anything else is 401 `{"detail": "Invalid API key"}`. An `mcpat_` token that is not (unknown, expired,
 * revoked, or issued for the MCP server at another origin) is a 401 whose `WWW-Authenticate` says
 * `error="invalid_token"` with an `error_description` (RFC 6750 §3.1), so a client refreshes or signs in again.
 */
import type { NextFunction, Request, Response } from 'express';
import { AuthenticationError, ForbiddenError } from '@agw/shared';
import type { ApiKeyService } from '../tenants/api-keys';
import type { SessionTokens } from '../tenants/session-tokens';
import type { TenantRepository } from '../tenants/tenant.repository';

export interface AuthDeps {
  apiKeys: ApiKeyService;
  sessions: SessionTokens;
  tenants: TenantRepository;
  adminEmails: Set<string>;
  /** OAuth access tokens of MCP clients (docs/auth.md, "MCP clients: OAuth") */
  oauth: {
    /** the token's caller at `resource` (the MCP server at the request's origin), or why not */
    check(token: string, resource?: string): Promise<{ caller: { tenantId: string; agentName: string; clientId: string; grantId: string; userId?: string } } | { problem: string }>;
    /** the MCP resource at the public origin a request came to (PUBLIC_ORIGINS) */
    resourceOf?(req: Request): string;
  };
}

/** RFC 6750 §3.1: the challenge of a route (the MCP server's names its resource metadata) with the error. */
function invalidToken(res: Response, description: string): void {
  const base = typeof res.locals.authChallenge === 'string' ? `${res.locals.authChallenge}, ` : 'Bearer ';
  res.locals.authChallenge = `${base}error="invalid_token", error_description="${description.replace(/["\\]/g, '')}"`;
}

export function authenticate(d: AuthDeps) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const apiKey = req.header('x-api-key');
    const authz = req.header('authorization');
    const bearer = authz?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    if (apiKey !== undefined || bearer?.startsWith('agw_')) {
      const { tenantId, allowed, scope, keyHash } = await d.apiKeys.authenticate((apiKey ?? bearer) as string);
      if (!tenantId) throw new AuthenticationError('Invalid API key');
      req.auth = { tenantId, method: 'api_key', isAdmin: false, keyScope: scope, keyHash };
      // the tenant's rate limit was counted in the key look-up's round trip: tenantRateLimit uses the answer
      if (allowed !== undefined) res.locals.rateLimitAllowed = allowed;
      return next();
    }
    if (bearer?.startsWith('mcpat_')) {
      const found = await d.oauth.check(bearer, d.oauth.resourceOf?.(req));
      if ('problem' in found) {
        invalidToken(res, found.problem);
        throw new AuthenticationError(`${found.problem[0].toUpperCase()}${found.problem.slice(1)}`);
      }
      const { caller } = found;
      req.auth = { tenantId: caller.tenantId, method: 'oauth', isAdmin: false, keyScope: 'agent', keyHash: `oauth-grant:${caller.grantId}`, agentName: caller.agentName, oauthClientId: caller.clientId, ...(caller.userId ? { actsForUserId: caller.userId } : {}) };
      return next();
    }
    if (bearer) {
      const mcp = await d.sessions.verifyMcp(bearer);
      if (mcp) {
        if (req.path !== `/mcp/server/sessions/${mcp.sessionId}`) throw new ForbiddenError(`This token is scoped to the MCP server of managed session ${mcp.sessionId}`);
        req.auth = { tenantId: mcp.tenantId, method: 'mcp_session', mcpSessionId: mcp.sessionId, isAdmin: false, ...(mcp.actsFor ? { actsForUserId: mcp.actsFor } : {}) };
        return next();
      }
      const claims = await d.sessions.verify(bearer);
      if (!claims) throw new AuthenticationError('Invalid or expired session token');
      const user = await d.tenants.getUser(claims.tenantId, claims.userId);
      if (!user) throw new AuthenticationError('Invalid or expired session token');
      req.auth = {
        tenantId: claims.tenantId,
        method: 'jwt',
        userId: user.id,
        email: user.email,
        isAdmin: user.is_admin || d.adminEmails.has(user.email.toLowerCase()),
        role: user.role,
        ...(claims.viaApiKey ? { viaApiKey: true } : {}),
      };
      return next();
    }
    throw new AuthenticationError('Invalid API key');
  };
}
