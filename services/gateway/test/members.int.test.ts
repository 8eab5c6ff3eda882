/**
 * Members, roles and invitations (docs/auth.md, "Members, invitations and roles") over real HTTP against
 * the real Postgres, through the real authentication middleware (session JWTs read the user row on every
 * request), the key-scope check and the role guard: the invitation lifecycle (single use, expiry, withdrawal,
 * another tenant's id), the owner rules (an admin grants no owner, the last owner stays), the role table on
 * the members routes, and a removal that ends the member's sessions, refresh tokens and OAuth grants.
 */
import { randomUUID } from 'node:crypto';
import { type Db, createLogger, openTestDb } from '@agw/shared';
import type { GatewayDeps } from '../src/deps';
import { authenticate } from '../src/http/auth.middleware';
import { keyScopeGuard } from '../src/http/key-scope.middleware';
import { ROLE_SUMMARY, type Role, roleGuard } from '../src/http/permissions';
import { memberRoutes, publicMemberRoutes } from '../src/http/routes/members.routes';
import { ConsoleRefresh } from '../src/tenants/console-refresh';
import { Members } from '../src/tenants/members';
import { SessionTokens } from '../src/tenants/session-tokens';
import { TenantRepository } from '../src/tenants/tenant.repository';
import { newApiKey } from '../src/tenants/api-keys';
import { type ServedRoutes, serveRoutes } from './support/served-routes';

let db: Db;
let served: ServedRoutes;
let clock = new Date();
const sessions = new SessionTokens('secret-for-members-tests', 600);
let refresh: ConsoleRefresh;

beforeAll(async () => {
  db = await openTestDb();
  const tenants = new TenantRepository(db);
  refresh = new ConsoleRefresh(db);
  const members = new Members(db, { publicBaseUrl: 'http://gw.example:8080/api', logger: createLogger('test', 'silent'), ttlSeconds: 3600, now: () => clock });
  // the vault's side of a removal (the member's per_user upstream connections): no upstream here
  const federation = { client: { listUpstreams: async () => ({ upstreams: [] }), disconnectUpstream: async () => ({}) } };
  const d = { members, federation } as unknown as GatewayDeps;
  served = await serveRoutes((app) => {
    app.use(publicMemberRoutes(d));
    app.use(
      authenticate({
        apiKeys: { authenticate: async () => ({}) } as never,
        sessions,
        tenants,
        adminEmails: new Set(),
        oauth: { check: async () => ({ problem: 'no' }) },
      }),
    );
    app.use(keyScopeGuard);
    app.use(roleGuard);
    app.use(memberRoutes(d));
    // a route of another family, to see the table at work beyond /members
    app.get('/audit/log', (_req, res) => {
      res.json({ records: [] });
    });
  });
});
afterAll(async () => {
  await served.close();
  await db.destroy();
});
beforeEach(() => {
  clock = new Date();
});

async function call(method: string, path: string, o: { token?: string; body?: unknown } = {}) {
  const r = await fetch(`${served.base}${path}`, {
    method,
    headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

/** A tenant with its owner, and the owner's session token. */
async function newTenant(): Promise<{ tenantId: string; ownerId: string; owner: string; email: string }> {
  const tenantId = randomUUID();
  const ownerId = randomUUID();
  const email = `owner-${ownerId.slice(0, 8)}@example.com`;
  await new TenantRepository(db).createTenantWithOwner({ id: tenantId, slug: `m-${tenantId}`, name: 'Members' }, { id: ownerId, email, passwordHash: null, isAdmin: false }, newApiKey(), {});
  const owner = (await sessions.issue({ userId: ownerId, tenantId, email })).access_token;
  return { tenantId, ownerId, owner, email };
}

/** Invites `role`, accepts, and signs the new member in (a session token as /auth/login issues it). */
async function member(t: { tenantId: string; owner: string }, role: string, by = t.owner): Promise<{ id: string; email: string; token: string }> {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.com`;
  const inv = await call('POST', '/members/invitations', { token: by, body: { email, role } });
  expect(inv.status).toBe(201);
  const acc = await call('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: 'correct horse battery' } });
  expect(acc.status).toBe(201);
  return { id: acc.body.user_id, email, token: (await sessions.issue({ userId: acc.body.user_id, tenantId: t.tenantId, email })).access_token };
}

describe('invitations', () => {
  it('are answered with a single-use token and accept URL, listed, accepted once into the invited role', async () => {
    const t = await newTenant();
    const n = randomUUID().slice(0, 8);
    const inv = await call('POST', '/members/invitations', { token: t.owner, body: { email: `New.Approver-${n}@Example.com`, role: 'approver' } });
    expect(inv.status).toBe(201);
    expect(inv.body).toMatchObject({ email: `new.approver-${n}@example.com`, role: 'approver', invited_by: t.email, expired: false });
    expect(inv.body.token).toMatch(/^agwi_/);
    expect(inv.body.accept_url).toBe(`http://gw.example:8080/invitation#token=${inv.body.token}`);
    expect(new Date(inv.body.expires_at).getTime() - clock.getTime()).toBe(3600_000);
    // only the hash is stored
    const row = await db.selectFrom('member_invitations').selectAll().where('id', '=', inv.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(inv.body.token);

    const list = await call('GET', '/members/invitations', { token: t.owner });
    expect(list.body.invitations.map((i: { id: string }) => i.id)).toEqual([inv.body.id]);
    expect(JSON.stringify(list.body)).not.toContain(inv.body.token);

    const acc = await call('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: 'correct horse battery' } });
    expect(acc.status).toBe(201);
    expect(acc.body).toMatchObject({ tenant_id: t.tenantId, email: `new.approver-${n}@example.com`, role: 'approver' });
    const again = await call('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: 'correct horse battery' } });
    expect(again.status).toBe(410);
    expect(again.body.detail).toMatch(/^This invitation was accepted already .*: an invitation works once/);

    const members = await call('GET', '/members', { token: t.owner });
    expect(members.body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [t.email, 'owner'],
      [`new.approver-${n}@example.com`, 'approver'],
    ]);
    expect((await call('GET', '/members/invitations', { token: t.owner })).body.count).toBe(0);
  });

  it('expire, can be withdrawn, and are unknown to another tenant; an unknown token is a 422 naming it', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const inv = await call('POST', '/members/invitations', { token: t.owner, body: { email: `late-${randomUUID()}@example.com`, role: 'viewer' } });
    clock = new Date(clock.getTime() + 3600_000);
    expect((await call('GET', '/members/invitations', { token: t.owner })).body.invitations[0]).toMatchObject({ id: inv.body.id, expired: true });
    const late = await call('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: 'correct horse battery' } });
    expect(late.status).toBe(410);
    expect(late.body.detail).toBe(`This invitation expired at ${inv.body.expires_at}: ask for a new one`);

    expect((await call('DELETE', `/members/invitations/${inv.body.id}`, { token: other.owner })).status).toBe(404);
    expect((await call('DELETE', `/members/invitations/${inv.body.id}`, { token: t.owner })).body).toEqual({ id: inv.body.id, withdrawn: true });
    expect((await call('DELETE', `/members/invitations/${inv.body.id}`, { token: t.owner })).status).toBe(404);
    const gone = await call('POST', '/members/invitations/accept', { body: { token: inv.body.token, password: 'correct horse battery' } });
    expect(gone.status).toBe(422);
    expect(gone.body.detail[0]).toMatchObject({ loc: ['body', 'token'] });
    expect((await call('POST', '/members/invitations/accept', { body: { token: 'agwi_nope', password: 'short' } })).status).toBe(422);
  });

  it('an e-mail with an account (here or in another tenant) is refused; a new invitation replaces the pending one', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const here = await call('POST', '/members/invitations', { token: t.owner, body: { email: t.email, role: 'viewer' } });
    expect(here.status).toBe(409);
    expect(here.body.detail).toContain('is a member of this tenant already');
    const elsewhere = await call('POST', '/members/invitations', { token: t.owner, body: { email: other.email, role: 'viewer' } });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.detail).toContain('has an account in another tenant: an e-mail address has one account');

    const email = `twice-${randomUUID()}@example.com`;
    const first = await call('POST', '/members/invitations', { token: t.owner, body: { email, role: 'viewer' } });
    const second = await call('POST', '/members/invitations', { token: t.owner, body: { email, role: 'auditor' } });
    expect((await call('POST', '/members/invitations/accept', { body: { token: first.body.token, password: 'correct horse battery' } })).status).toBe(422);
    expect((await call('POST', '/members/invitations/accept', { body: { token: second.body.token, password: 'correct horse battery' } })).body.role).toBe('auditor');
  });
});

describe('roles', () => {
  it('an admin invites and manages, but grants, changes and removes no owner; other roles manage nothing', async () => {
    const t = await newTenant();
    const admin = await member(t, 'admin');
    const ownerInvite = await call('POST', '/members/invitations', { token: admin.token, body: { email: `o-${randomUUID()}@example.com`, role: 'owner' } });
    expect(ownerInvite.status).toBe(403);
    expect(ownerInvite.body.detail).toBe('Your role (admin) may not invite an owner: only an owner grants the owner role');
    const viewer = await member(t, 'viewer', admin.token);
    expect((await call('PATCH', `/members/${viewer.id}`, { token: admin.token, body: { role: 'auditor' } })).body).toMatchObject({ id: viewer.id, role: 'auditor' });
    expect((await call('PATCH', `/members/${viewer.id}`, { token: admin.token, body: { role: 'owner' } })).status).toBe(403);
    expect((await call('PATCH', `/members/${t.ownerId}`, { token: admin.token, body: { role: 'viewer' } })).body.detail).toBe("Your role (admin) may not change an owner's role: only an owner may");
    expect((await call('DELETE', `/members/${t.ownerId}`, { token: admin.token })).body.detail).toBe('Your role (admin) may not remove an owner: only an owner may');

    for (const role of ['policy_author', 'approver', 'auditor', 'viewer']) {
      const m = await member(t, role);
      const r = await call('POST', '/members/invitations', { token: m.token, body: { email: `x-${randomUUID()}@example.com`, role: 'viewer' } });
      expect(r.status).toBe(403);
      expect(r.body.detail).toBe(`Your role (${role}) may not POST /api/members/invitations: it needs one of the roles owner, admin; a ${role} may: ${ROLE_SUMMARY[role as Role]} (docs/auth.md, "Roles")`);
      expect((await call('GET', '/members', { token: m.token })).status).toBe(200);
      expect((await call('DELETE', `/members/${m.id}`, { token: m.token })).status).toBe(403);
    }
    // the table beyond /members: a viewer reads no audit log, an auditor does
    const viewer2 = await member(t, 'viewer');
    expect((await call('GET', '/audit/log', { token: viewer2.token })).status).toBe(403);
    expect((await call('GET', '/audit/log', { token: (await member(t, 'auditor')).token })).status).toBe(200);
  });

  it('the last owner can be neither demoted nor removed; with a second owner, one may leave', async () => {
    const t = await newTenant();
    const demote = await call('PATCH', `/members/${t.ownerId}`, { token: t.owner, body: { role: 'admin' } });
    expect(demote.status).toBe(409);
    expect(demote.body.detail).toBe(`${t.email} is the last owner of this tenant and cannot be demoted: make another member owner first`);
    const leave = await call('DELETE', `/members/${t.ownerId}`, { token: t.owner });
    expect(leave.status).toBe(409);
    expect(leave.body.detail).toBe(`${t.email} is the last owner of this tenant and cannot leave or be removed: make another member owner first`);

    const second = await member(t, 'owner');
    expect((await call('PATCH', `/members/${t.ownerId}`, { token: second.token, body: { role: 'admin' } })).body.role).toBe('admin');
    // the first owner is an admin now: it may not touch the remaining owner
    expect((await call('DELETE', `/members/${second.id}`, { token: t.owner })).status).toBe(403);
    expect((await call('DELETE', `/members/${second.id}`, { token: second.token })).status).toBe(409);
    // another tenant's member is a 404
    const other = await newTenant();
    expect((await call('PATCH', `/members/${other.ownerId}`, { token: second.token, body: { role: 'viewer' } })).status).toBe(404);
    expect((await call('DELETE', `/members/${other.ownerId}`, { token: second.token })).status).toBe(404);
    expect((await call('DELETE', '/members/not-a-uuid', { token: second.token })).status).toBe(404);
  });
});

describe('removing a member', () => {
  it('ends its session tokens at once, revokes its console refresh tokens and the OAuth grants it consented', async () => {
    const t = await newTenant();
    const m = await member(t, 'approver');
    const keep = await refresh.issue({ tenantId: t.tenantId, userId: t.ownerId });
    const gone = await refresh.issue({ tenantId: t.tenantId, userId: m.id });
    const clientId = `c-${randomUUID()}`;
    await db.insertInto('oauth_clients').values({ client_id: clientId, metadata: JSON.stringify({ client_name: 'x', redirect_uris: ['http://127.0.0.1/cb'] }) } as never).execute();
    const grantId = randomUUID();
    await db
      .insertInto('oauth_grants')
      .values({ id: grantId, tenant_id: t.tenantId, client_id: clientId, agent_name: 'claude', scopes: ['mcp:tools'], resource: 'http://x/api/mcp/server', granted_by: m.email, granted_by_user_id: m.id, expires_at: new Date(Date.now() + 86400_000) } as never)
      .execute();

    expect((await call('GET', '/members', { token: m.token })).status).toBe(200);
    const r = await call('DELETE', `/members/${m.id}`, { token: t.owner });
    expect(r.body).toEqual({ id: m.id, email: m.email, removed: true });
    const after = await call('GET', '/members', { token: m.token });
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('Invalid or expired session token');
    expect(await refresh.rotate(gone)).toBeUndefined();
    expect(await refresh.rotate(keep)).toMatchObject({ userId: t.ownerId });
    expect(await db.selectFrom('oauth_grants').select('id').where('id', '=', grantId).executeTakeFirst()).toBeUndefined();
    expect((await call('GET', '/members', { token: t.owner })).body.members.map((x: { id: string }) => x.id)).toEqual([t.ownerId]);
  });
});
