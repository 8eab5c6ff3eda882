/**
 * Who is calling, once authenticated: the tenant, the credential's kind and, for a human, the member and their
 * role. The HTTP layer attaches it to a request (http/request-context.ts); the domain reads it (who acted, whom
 * a call acts for) without depending on the HTTP layer.
 */
import type { Role } from './roles';

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
  /** a signed-in member's role in the tenant (tenants/roles.ts; what it may call: http/permissions.ts); absent for machine credentials */
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

/** A decision by a human, as approvals_require_human asks: a session token from a log-in, not from an API key. */
export const isHumanSession = (a: AuthContext) => a.method === 'jwt' && Boolean(a.userId) && !a.viaApiKey;
