/**
 * Sign-up and log-in. Sign-up creates the tenant, its owner (password hashed with scrypt) and the
 * tenant's API key, returned once. New tenants get the `general` policy template (the policy service's
 * default for a tenant without a policy). E-mail verification: no mail server is configured locally, so
 * the verification link is logged at info level (docs/auth.md); the API key is returned at sign-up.
 */
import { randomUUID } from 'node:crypto';
import { AuthenticationError, ConflictError, ForbiddenError, type Logger } from '@agw/shared';
import { SignJWT, jwtVerify } from 'jose';
import { newApiKey } from './api-keys';
import { hashPassword, verifyPassword } from './passwords';
import type { SessionTokens } from './session-tokens';
import { NEW_TENANT_SETTINGS } from './settings.schema';
import type { TenantRepository } from './tenant.repository';

export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return s || 'tenant';
}

export class Accounts {
  private readonly verifyKey: Uint8Array;
  constructor(
    private readonly tenants: TenantRepository,
    private readonly sessions: SessionTokens,
    private readonly o: {
      publicBaseUrl: string;
      adminEmails: Set<string>;
      logger: Logger;
      verifySecret: Uint8Array;
      /** password login waits for the e-mail verification (production default; docs/auth.md) */
      requireVerifiedEmail?: boolean;
      /** whether a tenant refuses password and GitHub sign-in (single sign-on required: docs/auth.md) */
      requiresSso?: (tenantId: string) => Promise<boolean>;
    },
  ) {
    this.verifyKey = o.verifySecret;
  }

  async signup(input: { email: string; password: string; tenant_name: string }) {
    const email = input.email.trim().toLowerCase();
    if (await this.tenants.findUserByEmail(email)) throw new ConflictError('An account with this e-mail already exists');
    const tenantId = randomUUID();
    const userId = randomUUID();
    let slug = slugify(input.tenant_name);
    if (await this.tenants.slugExists(slug)) slug = `${slug}-${tenantId.slice(0, 8)}`;
    const key = newApiKey();
    try {
      await this.tenants.createTenantWithOwner(
        { id: tenantId, slug, name: input.tenant_name },
        { id: userId, email, passwordHash: await hashPassword(input.password), isAdmin: this.o.adminEmails.has(email) },
        key,
        { ...NEW_TENANT_SETTINGS },
      );
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw new ConflictError('An account with this e-mail already exists');
      throw e;
    }
    const token = await new SignJWT({ tid: tenantId, purpose: 'verify-email' }).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setExpirationTime('2d').sign(this.verifyKey);
    // The link is the "e-mail": logged for the operator (no SMTP locally); it carries no API key or password.
    this.o.logger.info({ tenantId, userId, verify_url: `${this.o.publicBaseUrl}/auth/verify-email?token=${token}` }, 'verification e-mail');
    return {
      tenant_id: tenantId,
      slug,
      user_id: userId,
      email,
      api_key: key.key,
      email_verification: 'sent' as const,
      message: 'Store the API key now: it is shown only once. Send it as the X-API-Key header.',
    };
  }

  /** A verification link works once: a second use is a 409 (the address is verified already). */
  async verifyEmail(token: string): Promise<{ verified: true; email: string }> {
    let user;
    try {
      const { payload } = await jwtVerify(token, this.verifyKey, { algorithms: ['HS256'] });
      if (payload.purpose !== 'verify-email' || typeof payload.sub !== 'string' || typeof payload.tid !== 'string') throw new Error('bad token');
      user = await this.tenants.getUser(payload.tid, payload.sub);
      if (!user) throw new Error('no user');
    } catch {
      throw new AuthenticationError('Invalid or expired verification link');
    }
    if (!(await this.tenants.markEmailVerified(user.tenant_id, user.id))) throw new ConflictError('This verification link was used already: the e-mail address is verified');
    return { verified: true, email: user.email };
  }

  /**
   * Log in (or sign up) with a GitHub identity: a known GitHub id logs in; else a user with the same
   * e-mail, verified by GitHub, is linked; else a new tenant is created with this user as owner (no
   * password; an API key is obtained with POST /api-keys/rotate and the session token).
   */
  async loginWithGithub(g: { githubId: string; login: string; email: string | null }) {
    let user = await this.tenants.findUserByGithubId(g.githubId);
    let created = false;
    if (!user && g.email) {
      const byEmail = await this.tenants.findUserByEmail(g.email.toLowerCase());
      if (byEmail) {
        await this.tenants.linkGithub(byEmail.tenant_id, byEmail.id, g.githubId);
        user = byEmail;
      }
    }
    if (!user) {
      if (!g.email) throw new AuthenticationError('GitHub did not return a verified e-mail address for this account');
      const email = g.email.toLowerCase();
      const tenantId = randomUUID();
      const userId = randomUUID();
      let slug = slugify(g.login);
      if (await this.tenants.slugExists(slug)) slug = `${slug}-${tenantId.slice(0, 8)}`;
      await this.tenants.createTenantWithOwner(
        { id: tenantId, slug, name: g.login },
        { id: userId, email, passwordHash: null, githubId: g.githubId, isAdmin: this.o.adminEmails.has(email), emailVerified: true },
        newApiKey(),
        { ...NEW_TENANT_SETTINGS },
      );
      user = (await this.tenants.findUserByGithubId(g.githubId))!;
      created = true;
    }
    if (!created) await this.refuseWhenSsoRequired(user.tenant_id, 'GitHub');
    const token = await this.sessions.issue({ userId: user.id, tenantId: user.tenant_id, email: user.email });
    return { ...token, tenant_id: user.tenant_id, new_account: created };
  }

  /** A tenant that requires single sign-on: its members sign in with its identity provider only (403). */
  private async refuseWhenSsoRequired(tenantId: string, how: 'Password' | 'GitHub'): Promise<void> {
    if (!(await this.o.requiresSso?.(tenantId))) return;
    throw new ForbiddenError(
      `${how} sign-in is turned off for this tenant: it requires single sign-on (require_sso). Sign in with your identity provider (GET /api/auth/sso/start?tenant=<your e-mail>, or "Sign in with SSO" in the console); the tenant's API key stays usable`,
    );
  }

  async login(input: { email: string; password: string }) {
    const user = await this.tenants.findUserByEmail(input.email.trim().toLowerCase());
    // verify against a dummy hash when the user is unknown, so timing does not reveal which e-mails exist
    const ok = await verifyPassword(input.password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok) throw new AuthenticationError('Invalid e-mail or password');
    if (this.o.requireVerifiedEmail && !user.email_verified) {
      throw new ForbiddenError('E-mail address not verified: open the verification link sent at sign-up, then log in');
    }
    await this.refuseWhenSsoRequired(user.tenant_id, 'Password');
    return this.sessions.issue({ userId: user.id, tenantId: user.tenant_id, email: user.email });
  }
}

const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
