/**
 * Members, their roles and invitations (docs/auth.md, "Members, invitations and roles"; tenants/members.ts).
 * Who may call each route is the permission table's business (http/permissions.ts: owners and admins
 * manage); the rules about the owner role are the service's.
 */
import { AppError, InputError } from '@agw/shared';
import { type Request, Router } from 'express';
import { z } from 'zod';
import type { TenantsFeature } from '../../features/tenants.feature';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { type Actor, InvitationGone } from '../../tenants/members';
import { ROLES } from '../permissions';
import { uuidParam } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const roleSchema = z.enum(ROLES).meta({ id: 'MemberRole', description: 'owner, admin, policy_author, approver, auditor or viewer (docs/auth.md, "Roles")' });
const inviteBody = z.object({ email: z.email('email must be a valid e-mail address').max(320), role: roleSchema }).strict();
const acceptBody = z
  .object({ token: z.string().min(1).max(256), password: z.string().min(8, 'password must be at least 8 characters').max(1024) })
  .strict();
const roleBody = z.object({ role: roleSchema }).strict();

const memberSchema = z
  .object({ id: z.string(), email: z.string(), role: roleSchema, email_verified: z.boolean(), created_at: timestamp() })
  .meta({ id: 'Member', description: 'A user of the tenant and its role' });
const invitationSchema = z
  .object({ id: z.string(), email: z.string(), role: roleSchema, invited_by: z.string(), created_at: timestamp(), expires_at: timestamp(), expired: z.boolean() })
  .meta({ id: 'MemberInvitation', description: 'A pending invitation (its token is never shown again)' });
const createdInvitation = invitationSchema.extend({
  token: z.string().meta({ description: 'single-use, shown once; also delivered to the invitee (the gateway log stands in for the e-mail)' }),
  accept_url: z.string().meta({ description: "the console's page that accepts it (the token in the fragment)" }),
});
const listResponse = z.object({ members: z.array(memberSchema), count: z.number().int() });
const invitationsResponse = z.object({ invitations: z.array(invitationSchema), count: z.number().int() });
const acceptedResponse = z.object({ tenant_id: z.string(), user_id: z.string(), email: z.string(), role: roleSchema, message: z.string() });
const withdrawnResponse = z.object({ id: z.string(), withdrawn: z.literal(true) });
const removedResponse = z.object({ id: z.string(), email: z.string(), removed: z.literal(true) });

/** The caller as the member rules see it: the tenant key (or a session made from it) is the owner. */
function actorOf(req: Request): Actor {
  const a = authOf(req);
  if (a.method === 'jwt' && !a.viaApiKey && a.role) return { role: a.role, name: a.email ?? `user:${a.userId}`, userId: a.userId };
  return { role: 'owner', name: a.method === 'jwt' && a.email ? `api_key_session:${a.email}` : 'tenant_key' };
}

/** Public (the token is the credential): accepting an invitation. */
export function publicMemberRoutes(d: Pick<TenantsFeature, 'members'>): Router {
  const r = Router();
  r.post('/members/invitations/accept', async (req, res) => {
    const body = parseWith(acceptBody, req.body, 'body');
    try {
      const m = await d.members.accept(body.token, body.password);
      if (!m) throw InputError.at(['body', 'token'], 'unknown invitation token (withdrawn, replaced by a newer invitation, or mistyped)');
      reply(res, acceptedResponse, { ...m, message: 'Welcome: sign in with your e-mail address and this password (POST /api/auth/login)' }, 201);
    } catch (e) {
      if (e instanceof InvitationGone) {
        res.status(410).json({ detail: e.message });
        return;
      }
      throw e;
    }
  });
  return r;
}

export function memberRoutes(d: Pick<TenantsFeature, 'members' | 'federation' | 'logger'>): Router {
  const r = Router();
  r.get('/members', async (req, res) => {
    const members = await d.members.list(authOf(req).tenantId);
    reply(res, listResponse, { members, count: members.length });
  });
  r.get('/members/invitations', async (req, res) => {
    const invitations = await d.members.invitations(authOf(req).tenantId);
    reply(res, invitationsResponse, { invitations, count: invitations.length });
  });
  r.post('/members/invitations', async (req, res) => {
    const body = parseWith(inviteBody, req.body, 'body');
    reply(res, createdInvitation, await d.members.invite(authOf(req).tenantId, actorOf(req), body), 201);
  });
  r.delete('/members/invitations/:id', async (req, res) => {
    reply(res, withdrawnResponse, await d.members.withdraw(authOf(req).tenantId, uuidParam(req.params.id, 'Invitation')));
  });
  r.patch('/members/:id', async (req, res) => {
    const id = uuidParam(req.params.id, 'Member');
    const body = parseWith(roleBody, req.body, 'body');
    reply(res, memberSchema, await d.members.changeRole(authOf(req).tenantId, actorOf(req), id, body.role));
  });
  r.delete('/members/:id', async (req, res) => {
    const tenantId = authOf(req).tenantId;
    const by = actorOf(req);
    const removed = await d.members.remove(tenantId, by, uuidParam(req.params.id, 'Member'));
    await endUpstreamConnections(d, tenantId, removed.id, by.name);
    reply(res, removedResponse, removed);
  });
  return r;
}

/**
 * A removed member's own connections to per-user OAuth upstreams (docs/federation.md) are disconnected (and
 * revoked at the upstream where it offers revocation), so no key the member issued keeps acting with their
 * account. The member is removed first; a connection the vault cannot remove now is logged by name.
 */
async function endUpstreamConnections(d: Pick<TenantsFeature, 'federation' | 'logger'>, tenantId: string, memberId: string, by: string): Promise<void> {
  const { upstreams } = await d.federation.client.listUpstreams({ tenant_id: tenantId }).catch((e: unknown) => {
    d.logger.warn({ tenantId, memberId, err: (e as Error).message }, 'removed member: the upstream connections could not be listed; disconnect them on the Tools page');
    return { upstreams: [] };
  });
  // the list names no connections: each per-user OAuth upstream is asked, and "no connection" (404) is the common answer
  for (const u of upstreams.filter((x) => x.connection === 'per_user' && x.credential_type === 'oauth')) {
    await d.federation.client.disconnectUpstream({ tenant_id: tenantId, name: u.name, user_id: memberId, human_id: `${by} (member removed)` }).catch((e: unknown) => {
      if (e instanceof AppError && e.code === 'not_found') return;
      d.logger.warn({ tenantId, memberId, upstream: u.name, err: (e as Error).message }, 'removed member: an upstream connection could not be removed; disconnect it on the Tools page');
    });
  }
}

const roleRefused = errors[403]("the caller's role (docs/auth.md, \"Roles\"), or an admin touching the owner role");
addPaths({
  '/members': {
    get: { summary: "The tenant's members and their roles", responses: { 200: response('members', listResponse) } },
  },
  '/members/{id}': {
    patch: {
      summary: "Change a member's role (owners and admins; only an owner grants or takes the owner role)",
      parameters: [pathParam('id', { type: 'string', format: 'uuid' })],
      requestBody: jsonBody(roleBody),
      responses: { 200: response('the member', memberSchema), 403: roleRefused, 404: errors[404]('no such member of this tenant'), 409: errors[409]('the last owner cannot be demoted'), 422: errors[422]() },
    },
    delete: {
      summary: 'Remove a member: its sessions end at once, its refresh tokens and the OAuth grants it consented go',
      parameters: [pathParam('id', { type: 'string', format: 'uuid' })],
      responses: { 200: response('removed', removedResponse), 403: roleRefused, 404: errors[404]('no such member of this tenant'), 409: errors[409]('the last owner cannot leave') },
    },
  },
  '/members/invitations': {
    get: { summary: 'Pending invitations (expired ones flagged)', responses: { 200: response('invitations', invitationsResponse), 403: roleRefused } },
    post: {
      summary: 'Invite someone by e-mail with a role; the single-use token (7 days) is shown once and delivered to the invitee',
      requestBody: jsonBody(inviteBody),
      responses: { 201: response('the invitation, its token and accept URL', createdInvitation), 403: roleRefused, 409: errors[409]('a member already, or an account in another tenant'), 422: errors[422]() },
    },
  },
  '/members/invitations/{id}': {
    delete: {
      summary: 'Withdraw a pending invitation (its token stops working)',
      parameters: [pathParam('id', { type: 'string', format: 'uuid' })],
      responses: { 200: response('withdrawn', withdrawnResponse), 403: roleRefused, 404: errors[404]('no pending invitation of this tenant with this id') },
    },
  },
  '/members/invitations/accept': {
    post: {
      security: [],
      summary: 'Accept an invitation with its token: creates the member with the invited role (per-IP rate limit)',
      requestBody: jsonBody(acceptBody),
      responses: {
        201: response('the new member', acceptedResponse),
        409: errors[409]('the e-mail has an account already'),
        410: response('the invitation was used already or expired', z.object({ detail: z.string() })),
        422: errors[422]('invalid body, or an unknown token (loc body.token)'),
      },
    },
  },
});
