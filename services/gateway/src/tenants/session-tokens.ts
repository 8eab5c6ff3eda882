/** Session tokens (JWT, HS256, through jose): sub = user id, tid = tenant id, short TTL. */
import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt, jwtVerify } from 'jose';

export interface SessionClaims {
  userId: string;
  tenantId: string;
  email: string;
  /** made by POST /auth/session from an API key (claim `via: "api_key"`): not a human log-in */
  viaApiKey?: boolean;
}

const MCP_SCOPE = 'mcp_session';

export class SessionTokens {
  private readonly key: Uint8Array;
  constructor(
    secret: string | undefined,
    private readonly ttlSeconds: number,
    private readonly issuer = 'agw-gateway',
  ) {
    this.key = secret ? new TextEncoder().encode(secret) : randomBytes(32);
  }

  async issue(c: SessionClaims): Promise<{ access_token: string; token_type: 'bearer'; expires_in: number }> {
    const token = await new SignJWT({ tid: c.tenantId, email: c.email, ...(c.viaApiKey ? { via: 'api_key' } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(c.userId)
      .setIssuer(this.issuer)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
    return { access_token: token, token_type: 'bearer', expires_in: this.ttlSeconds };
  }

  /**
   * A token for one managed session's MCP server (`/api/mcp/server/sessions/<id>`), handed to the agent
   * platform when the session was created by a signed-in user (an API key caller hands its key, as the
   * spec says). It is good for that session's MCP server only and expires with the session. `actsFor`
   * (claim `act_sub`) is the member who started the session: its calls act for them (a per_user
   * upstream uses their connection, docs/federation.md).
   */
  async issueMcp(tenantId: string, sessionId: string, ttlSeconds: number, actsFor?: string): Promise<string> {
    return new SignJWT({ tid: tenantId, mcp_sid: sessionId, scope: MCP_SCOPE, ...(actsFor ? { act_sub: actsFor } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(`mcp-session:${sessionId}`)
      .setIssuer(this.issuer)
      .setIssuedAt()
      .setExpirationTime(`${Math.max(60, Math.ceil(ttlSeconds))}s`)
      .sign(this.key);
  }

  /** The tenant, session (and starting member) of a valid session-scoped MCP token, or undefined (any other token). */
  async verifyMcp(token: string): Promise<{ tenantId: string; sessionId: string; actsFor?: string } | undefined> {
    try {
      if (decodeJwt(token).scope !== MCP_SCOPE) return undefined;
      const { payload } = await jwtVerify(token, this.key, { issuer: this.issuer, algorithms: ['HS256'] });
      if (payload.scope !== MCP_SCOPE || typeof payload.tid !== 'string' || typeof payload.mcp_sid !== 'string') return undefined;
      return { tenantId: payload.tid, sessionId: payload.mcp_sid, ...(typeof payload.act_sub === 'string' ? { actsFor: payload.act_sub } : {}) };
    } catch {
      return undefined;
    }
  }

  /** The claims of a valid token, or undefined (expired, forged, malformed). */
  async verify(token: string): Promise<SessionClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: this.issuer, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string' || payload.scope !== undefined) return undefined;
      return { userId: payload.sub, tenantId: payload.tid, email: String(payload.email ?? ''), ...(payload.via === 'api_key' ? { viaApiKey: true } : {}) };
    } catch {
      return undefined;
    }
  }
}
