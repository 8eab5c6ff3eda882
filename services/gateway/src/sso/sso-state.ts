/**
 * The SSO sign-in's pending requests (docs/auth.md, "Single sign-on (OIDC)"): at the start the gateway
 * keeps, under the random `state` it sends to the provider, the tenant, the PKCE code verifier, the nonce
 * and the SHA-256 of a random value that goes to the browser as an HttpOnly cookie. The callback takes the
 * entry out (Redis GETDEL: one use, on every replica) and accepts it only with the same browser's cookie:
 * a replayed callback finds nothing, and another browser's callback does not match.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from '@agw/shared';
import { sha256Hex } from '@agw/shared';

export const SSO_STATE_TTL_SECONDS = 600;

export interface SsoPending {
  tenantId: string;
  codeVerifier: string;
  nonce: string;
  /** SHA-256 (hex) of the browser cookie's value */
  browserHash: string;
  /** the configuration's version the request was started with (updated_at) */
  configVersion: string;
  createdAt: string;
}

export type SsoTakeResult = { ok: true; pending: SsoPending } | { ok: false; reason: 'unknown_state' | 'browser_mismatch' };

export class SsoStateStore {
  constructor(
    private readonly redis: Pick<Redis, 'set' | 'getdel'>,
    private readonly prefix = 'agw:sso:state:',
    private readonly ttlSeconds = SSO_STATE_TTL_SECONDS,
  ) {}

  /** A new browser binding: the cookie value, and its hash for the entry. */
  static newBrowserBinding(): { cookie: string; hash: string } {
    const cookie = randomBytes(32).toString('base64url');
    return { cookie, hash: sha256Hex(cookie) };
  }

  async save(state: string, pending: SsoPending): Promise<void> {
    // NX: a state is random (32 bytes); never overwrite one
    const r = await this.redis.set(this.prefix + state, JSON.stringify(pending), 'EX', this.ttlSeconds, 'NX');
    if (r !== 'OK') throw new Error('SSO state collision');
  }

  /** Takes the entry out (once, fleet-wide) and checks it belongs to this browser. */
  async take(state: string, browserCookie: string | undefined): Promise<SsoTakeResult> {
    if (!state || state.length > 256) return { ok: false, reason: 'unknown_state' };
    const raw = await this.redis.getdel(this.prefix + state);
    if (!raw) return { ok: false, reason: 'unknown_state' };
    const pending = JSON.parse(raw) as SsoPending;
    const given = Buffer.from(sha256Hex(browserCookie ?? ''), 'hex');
    const want = Buffer.from(pending.browserHash, 'hex');
    if (!browserCookie || given.length !== want.length || !timingSafeEqual(given, want)) return { ok: false, reason: 'browser_mismatch' };
    return { ok: true, pending };
  }
}
