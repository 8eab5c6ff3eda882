/**
 * Members of a tenant and their roles (docs/auth.md, "Members, invitations and roles"). A member is a user
 * row of the tenant with a role (http/permissions.ts); the one who signed up is the owner. Owners and
 * admins invite by e-mail: an invitation carries a single-use token that expires (only its SHA-256 is
 * stored), delivered like the verification mail (the gateway log stands in for the e-mail) and returned to
 * the inviter once, with the console's accept URL. Accepting creates the member with the invited role.
 *
 * An e-mail has one account (users.email is unique across tenants, and the log-in is by e-mail alone), so an
 * address with an account elsewhere cannot be invited or accept: 409 naming the rule.
 *
 * Owners are protected: only an owner grants, changes or removes the owner role, and the last owner can be
 * neither demoted nor removed (409). Removing a member deletes the user row: its session tokens fail at once
 * (auth.middleware reads the user on every request), its console refresh tokens are revoked, and the OAuth
 * grants it consented go with the row (oauth_grants.granted_by_user_id, ON DELETE CASCADE).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ConflictError, type Db, ForbiddenError, type Logger, NotFoundError, sha256Hex } from '@agw/shared';
import type { Role } from './roles';
import { hashPassword } from './passwords';

export const INVITATION_TTL_SECONDS = 7 * 86400;

export interface Member {
  id: string;
  email: string;
  role: Role;
  email_verified: boolean;
  created_at: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invited_by: string;
  created_at: string;
  expires_at: string;
  expired: boolean;
}

/** Who acts: an owner (the tenant key too) or an admin (the routes let no other role in). */
export interface Actor {
  role: Role;
  /** as invitations name the inviter */
  name: string;
  userId?: string;
}

/** The answer to a token that was good once: expired or used (410 at the edge). */
export class InvitationGone extends Error {}

export class Members {
  constructor(
    private readonly db: Db,
    private readonly o: { publicBaseUrl: string; logger: Logger; ttlSeconds?: number; now?: () => Date },
  ) {}

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  async list(tenantId: string): Promise<Member[]> {
    const rows = await this.db.selectFrom('users').select(['id', 'email', 'role', 'email_verified', 'created_at']).where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() }));
  }

  /** The URL the invitee opens: the console's page, the token in the fragment (never sent to a server log). */
  acceptUrl(token: string): string {
    return `${new URL(this.o.publicBaseUrl).origin}/invitation#token=${token}`;
  }

  async invite(tenantId: string, by: Actor, input: { email: string; role: Role }): Promise<Invitation & { token: string; accept_url: string }> {
    const email = input.email.trim().toLowerCase();
    if (input.role === 'owner' && by.role !== 'owner') throw new ForbiddenError(`Your role (${by.role}) may not invite an owner: only an owner grants the owner role`);
    const existing = await this.db.selectFrom('users').select(['tenant_id']).where('email', '=', email).executeTakeFirst();
    if (existing?.tenant_id === tenantId) throw new ConflictError(`${email} is a member of this tenant already: change its role with PATCH /api/members/{id}`);
    if (existing) throw new ConflictError(`${email} has an account in another tenant: an e-mail address has one account, so it cannot be invited (it may sign in there, or be invited with another address)`);
    const token = `agwi_${randomBytes(32).toString('base64url')}`;
    const now = this.now();
    const row = {
      id: randomUUID(),
      tenant_id: tenantId,
      email,
      role: input.role,
      token_hash: sha256Hex(token),
      invited_by: by.name,
      created_at: now,
      expires_at: new Date(now.getTime() + (this.o.ttlSeconds ?? INVITATION_TTL_SECONDS) * 1000),
    };
    await this.db.transaction().execute(async (trx) => {
      // a new invitation of the same address replaces the pending one (its token stops working)
      await trx.deleteFrom('member_invitations').where('tenant_id', '=', tenantId).where('email', '=', email).where('accepted_at', 'is', null).execute();
      await trx.insertInto('member_invitations').values(row).execute();
    });
    const acceptUrl = this.acceptUrl(token);
    // The "e-mail", as for the verification link (accounts.ts): logged for the operator, no SMTP locally.
    this.o.logger.info({ tenantId, invitationId: row.id, email, role: input.role, accept_url: acceptUrl }, 'invitation e-mail');
    return { ...this.present(row, now), token, accept_url: acceptUrl };
  }

  private present(r: { id: string; email: string; role: Role; invited_by: string; created_at: Date | string; expires_at: Date | string }, now = this.now()): Invitation {
    const expires = new Date(r.expires_at);
    return { id: r.id, email: r.email, role: r.role, invited_by: r.invited_by, created_at: new Date(r.created_at).toISOString(), expires_at: expires.toISOString(), expired: expires <= now };
  }

  /** Pending invitations (not accepted), expired ones included (`expired: true`), newest first. */
  async invitations(tenantId: string): Promise<Invitation[]> {
    const rows = await this.db
      .selectFrom('member_invitations')
      .select(['id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'])
      .where('tenant_id', '=', tenantId)
      .where('accepted_at', 'is', null)
      .orderBy('created_at', 'desc')
      .limit(1000)
      .execute();
    const now = this.now();
    return rows.map((r) => this.present(r, now));
  }

  async withdraw(tenantId: string, id: string): Promise<{ id: string; withdrawn: true }> {
    const r = await this.db.deleteFrom('member_invitations').where('tenant_id', '=', tenantId).where('id', '=', id).where('accepted_at', 'is', null).executeTakeFirst();
    if (Number(r.numDeletedRows) !== 1) throw new NotFoundError('Invitation not found (or accepted already)');
    return { id, withdrawn: true };
  }

  /** Public: the token is the credential. Unknown: 400 (InputError at the route); used or expired: InvitationGone. */
  async accept(token: string, password: string): Promise<{ tenant_id: string; user_id: string; email: string; role: Role } | undefined> {
    if (!token.startsWith('agwi_') || token.length > 128) return undefined;
    const passwordHash = await hashPassword(password);
    return this.db.transaction().execute(async (trx) => {
      const inv = await trx.selectFrom('member_invitations').selectAll().where('token_hash', '=', sha256Hex(token)).forUpdate().executeTakeFirst();
      if (!inv) return undefined;
      if (inv.accepted_at) throw new InvitationGone(`This invitation was accepted already (${new Date(inv.accepted_at).toISOString()}): an invitation works once; sign in with your e-mail and password`);
      const now = this.now();
      if (new Date(inv.expires_at) <= now) throw new InvitationGone(`This invitation expired at ${new Date(inv.expires_at).toISOString()}: ask for a new one`);
      const taken = await trx.selectFrom('users').select('tenant_id').where('email', '=', inv.email).executeTakeFirst();
      if (taken) throw new ConflictError(`${inv.email} has an account already${taken.tenant_id === inv.tenant_id ? ' in this tenant' : ' in another tenant'}: an e-mail address has one account`);
      const userId = randomUUID();
      // the address is verified: the invitee received the token sent to it
      await trx.insertInto('users').values({ id: userId, tenant_id: inv.tenant_id, email: inv.email, password_hash: passwordHash, email_verified: true, is_admin: false, role: inv.role }).execute();
      await trx.updateTable('member_invitations').set({ accepted_at: now }).where('id', '=', inv.id).execute();
      return { tenant_id: inv.tenant_id, user_id: userId, email: inv.email, role: inv.role };
    });
  }

  /** The tenant's owners, locked (the last-owner rule holds against concurrent changes). */
  private async lockOwners(trx: Db, tenantId: string): Promise<string[]> {
    return (await trx.selectFrom('users').select('id').where('tenant_id', '=', tenantId).where('role', '=', 'owner').forUpdate().execute()).map((r) => r.id);
  }

  private async target(trx: Db, tenantId: string, memberId: string) {
    const m = await trx.selectFrom('users').select(['id', 'email', 'role', 'email_verified', 'created_at']).where('tenant_id', '=', tenantId).where('id', '=', memberId).forUpdate().executeTakeFirst();
    if (!m) throw new NotFoundError('Member not found');
    return m;
  }

  async changeRole(tenantId: string, by: Actor, memberId: string, role: Role): Promise<Member> {
    return this.db.transaction().execute(async (trx) => {
      const owners = await this.lockOwners(trx as unknown as Db, tenantId);
      const m = await this.target(trx as unknown as Db, tenantId, memberId);
      if (by.role !== 'owner' && (role === 'owner' || m.role === 'owner')) {
        throw new ForbiddenError(`Your role (${by.role}) may not ${role === 'owner' ? 'grant the owner role' : "change an owner's role"}: only an owner may`);
      }
      if (m.role === 'owner' && role !== 'owner' && owners.length <= 1) {
        throw new ConflictError(`${m.email} is the last owner of this tenant and cannot be demoted: make another member owner first`);
      }
      await trx.updateTable('users').set({ role }).where('tenant_id', '=', tenantId).where('id', '=', memberId).execute();
      return { ...m, role, created_at: new Date(m.created_at).toISOString() };
    });
  }

  /** Removes the member: its sessions end at once, its console refresh tokens and its OAuth grants go. */
  async remove(tenantId: string, by: Actor, memberId: string): Promise<{ id: string; email: string; removed: true }> {
    return this.db.transaction().execute(async (trx) => {
      const owners = await this.lockOwners(trx as unknown as Db, tenantId);
      const m = await this.target(trx as unknown as Db, tenantId, memberId);
      if (m.role === 'owner' && by.role !== 'owner') throw new ForbiddenError(`Your role (${by.role}) may not remove an owner: only an owner may`);
      if (m.role === 'owner' && owners.length <= 1) {
        throw new ConflictError(`${m.email} is the last owner of this tenant and cannot leave or be removed: make another member owner first`);
      }
      await trx.updateTable('console_refresh_tokens').set({ revoked_at: this.now() }).where('tenant_id', '=', tenantId).where('user_id', '=', memberId).where('revoked_at', 'is', null).execute();
      // oauth_grants.granted_by_user_id ON DELETE CASCADE: the grants it consented, their codes and tokens
      await trx.deleteFrom('users').where('tenant_id', '=', tenantId).where('id', '=', memberId).execute();
      this.o.logger.info({ tenantId, memberId, by: by.name }, 'member removed');
      return { id: m.id, email: m.email, removed: true as const };
    });
  }
}
