/**
 * Console sessions that survive a reload (docs/console.md, "The session token"): the access token stays in
 * the page's memory; a refresh token lives in an HttpOnly, SameSite=Strict cookie scoped to /api/auth
 * (Secure outside the local profile), which no script can read. `POST /api/auth/refresh` trades it for a
 * fresh access token and a new refresh token (rotation); presenting a used one revokes the whole family
 * (a copy is in someone else's hands). Sign-out revokes the family; rotating the tenant's API key revokes
 * every console session of the tenant. Tokens are stored as SHA-256 only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type Db, sha256Hex } from '@agw/shared';

export const REFRESH_COOKIE = 'agw_refresh';
export const REFRESH_COOKIE_PATH = '/api/auth';


export interface RefreshOwner {
  tenantId: string;
  userId: string;
}

export class ConsoleRefresh {
  constructor(
    private readonly db: Db,
    readonly ttlSeconds = 7 * 86400,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A new family (a sign-in): its first token. */
  async issue(owner: RefreshOwner, familyId: string = randomUUID()): Promise<string> {
    const token = `agwr_${randomBytes(32).toString('base64url')}`;
    await this.db
      .insertInto('console_refresh_tokens')
      .values({ token_hash: sha256Hex(token), family_id: familyId, tenant_id: owner.tenantId, user_id: owner.userId, expires_at: new Date(this.now().getTime() + this.ttlSeconds * 1000) })
      .execute();
    return token;
  }

  /** Uses a token once: its owner and the next token, or undefined (unknown, expired, revoked, or reused: then the family goes). */
  async rotate(token: string): Promise<(RefreshOwner & { next: string }) | undefined> {
    if (!token.startsWith('agwr_') || token.length > 128) return undefined;
    const now = this.now();
    const used = await this.db
      .updateTable('console_refresh_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', sha256Hex(token))
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .returning(['family_id', 'tenant_id', 'user_id'])
      .executeTakeFirst();
    if (!used) {
      const row = await this.db.selectFrom('console_refresh_tokens').select('family_id').where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
      if (row) await this.revokeFamily(row.family_id);
      return undefined;
    }
    const owner = { tenantId: used.tenant_id, userId: used.user_id };
    return { ...owner, next: await this.issue(owner, used.family_id) };
  }

  /** Sign-out: the family of this token. */
  async revoke(token: string): Promise<void> {
    const row = await this.db.selectFrom('console_refresh_tokens').select('family_id').where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
    if (row) await this.revokeFamily(row.family_id);
  }

  /** Every console session of a tenant (its API key was rotated). */
  async revokeTenant(tenantId: string): Promise<void> {
    await this.db.updateTable('console_refresh_tokens').set({ revoked_at: this.now() }).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).execute();
  }

  private async revokeFamily(familyId: string): Promise<void> {
    await this.db.updateTable('console_refresh_tokens').set({ revoked_at: this.now() }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
  }
}

/** The refresh cookie of a request (the Cookie header, one name). */
export function refreshCookieOf(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === REFRESH_COOKIE) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
