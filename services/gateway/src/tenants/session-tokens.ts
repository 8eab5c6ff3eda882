/** Session tokens (JWT, HS256, through jose): sub = user id, tid = tenant id, short TTL. */
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';

export interface SessionClaims {
  userId: string;
  tenantId: string;
  email: string;
}

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
    const token = await new SignJWT({ tid: c.tenantId, email: c.email })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(c.userId)
      .setIssuer(this.issuer)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
    return { access_token: token, token_type: 'bearer', expires_in: this.ttlSeconds };
  }

  /** The claims of a valid token, or undefined (expired, forged, malformed). */
  async verify(token: string): Promise<SessionClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: this.issuer, algorithms: ['HS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string') return undefined;
      return { userId: payload.sub, tenantId: payload.tid, email: String(payload.email ?? '') };
    } catch {
      return undefined;
    }
  }
}
