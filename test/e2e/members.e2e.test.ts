/**
 * Members and roles (docs/auth.md, "Members, invitations and roles") through the running fleet:
 * - the role matrix, generated from the OpenAPI document the fleet serves: every operation x a signed-in
 *   member of every role (invited, accepted, logged in). Where the permission table
 *   (services/gateway/src/http/permissions.ts) says no, the answer is the role guard's 403 naming the role
 *   and the rule; where it says yes, never that 403 (the route may answer 404/422 to the dummy input);
 * - invitations: a reused token and an expired one are refused (410), another tenant's invitation is a 404;
 * - a policy_author changes the policy settings only; a removed member's session ends at once.
 */
import { randomUUID } from 'node:crypto';
import { type Db, createDb } from '@agw/shared';
import { type Tenant, api, humanSession, invitedMember, newTenant, toolCall } from './support/api';
import { E2E_DATABASE_URL } from './support/e2e-env';
import { documentOperations, fillPath, tenantObjects } from './support/route-matrix';
// the table under test, as the gateway was built with it
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PERMISSIONS, ROLES } = require('../../services/gateway/dist/http/permissions') as {
  PERMISSIONS: Record<string, { roles: readonly string[] | 'public' }>;
  ROLES: readonly string[];
};

jest.setTimeout(300_000);

/** Operations whose side effects would disturb the run; each is covered by its own tests. */
const SKIP: Record<string, string> = {
  'POST /api-keys/rotate': 'rotating the tenant key (owner only; the unit test of the table and rotation tests cover it)',
  'POST /anchor/trigger': 'a chain transaction per call (provenance tests)',
  'POST /audit/tamper-simulate': 'alters the chain (foundation tests)',
};

const PASSWORD = 'correct-horse-battery-staple';

/** A member of `t` with `role`: invited with the tenant key, accepted, signed in. */
const memberSession = (t: Tenant, role: string) => invitedMember({ key: t.apiKey }, role, `${role}-${randomUUID()}@e2e.test`, PASSWORD);

const isRoleRefusal = (r: { status: number; body: any }, role: string) => r.status === 403 && typeof r.body?.detail === 'string' && r.body.detail.startsWith(`Your role (${role}) may not`);

let db: Db;
beforeAll(() => {
  db = createDb(E2E_DATABASE_URL);
});
afterAll(async () => {
  await db.destroy();
});

describe('the role matrix (generated from the OpenAPI document)', () => {
  it('every operation x a member of every role: refused exactly where the table says no', async () => {
    const t = await newTenant('Roles');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { rate_limit_rps: 100_000, rate_limit_burst: 1_000_000 } })).status).toBe(200);
    const o = await tenantObjects(t, 'roles');
    const sessions: Record<string, string> = { owner: await humanSession(t) };
    for (const role of ROLES.filter((r) => r !== 'owner')) sessions[role] = (await memberSession(t, role)).token;
    for (const role of ROLES) expect((await api('GET', '/auth/me', { token: sessions[role] })).body).toMatchObject({ role, auth_method: 'jwt' });

    const ops = await documentOperations();
    expect(ops.length).toBeGreaterThan(90);
    const problems: string[] = [];
    let refused = 0;
    let allowed = 0;
    for (const op of ops) {
      const id = `${op.method} ${op.path}`;
      const rule = PERMISSIONS[id];
      if (!rule) {
        problems.push(`${id}: no rule in the permission table`);
        continue;
      }
      if (op.public || SKIP[id]) continue;
      const { url, missing } = fillPath(op.path, o.params);
      if (missing.length) {
        problems.push(`${id}: no object for ${missing.join(', ')}`);
        continue;
      }
      const body = ['POST', 'PUT', 'PATCH'].includes(op.method) ? {} : undefined;
      for (const role of ROLES) {
        const r = await api(op.method, url, { token: sessions[role], body });
        if (r.status >= 500) problems.push(`${id} as ${role}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        if (r.status === 401) problems.push(`${id} as ${role}: 401 (the session must stay valid)`);
        const may = rule.roles !== 'public' && rule.roles.includes(role);
        if (may) {
          allowed++;
          if (isRoleRefusal(r, role)) problems.push(`${id} as ${role}: refused by the role guard, the table allows it: ${r.body.detail}`);
        } else {
          refused++;
          if (!isRoleRefusal(r, role)) problems.push(`${id} as ${role}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)} (want the role 403)`);
          else if (!r.body.detail.includes(`${op.method} /api${url}`) || !r.body.detail.includes(`one of the roles ${(rule.roles as string[]).join(', ')}`)) problems.push(`${id} as ${role}: the 403 does not name the rule: ${r.body.detail}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(refused).toBeGreaterThan(150);
    expect(allowed).toBeGreaterThan(250);
    // the skipped ones, for the roles that may not
    for (const role of ROLES.filter((r) => r !== 'owner')) expect(isRoleRefusal(await api('POST', '/api-keys/rotate', { token: sessions[role] }), role)).toBe(true);
  });

  it('a policy_author changes the policy settings only; an approver decides, a viewer does not', async () => {
    const t = await newTenant('Policy author');
    const author = await memberSession(t, 'policy_author');
    const other = await api('PATCH', '/dashboard/settings', { token: author.token, body: { rate_limit_rps: 5 } });
    expect(other.status).toBe(403);
    expect(other.body.detail).toBe(
      'Your role (policy_author) may change the policy settings only (policy_template, policy_config, custom_policy, override_failing_tests, gateway_constraints), not rate_limit_rps: that needs the role owner or admin (docs/auth.md, "Roles")',
    );
    expect((await api('PATCH', '/dashboard/settings', { token: author.token, body: { policy_template: 'general' } })).status).toBe(200);

    const queued = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: toolCall({ tool: 'svc_db', method: 'delete', params: { table: 'orders' } }) });
    expect(queued.status).toBe(202);
    const viewer = await memberSession(t, 'viewer');
    expect(isRoleRefusal(await api('POST', `/approve/${queued.body.action_id}`, { token: viewer.token, body: {} }), 'viewer')).toBe(true);
    const approver = await memberSession(t, 'approver');
    const ok = await api('POST', `/approve/${queued.body.action_id}`, { token: approver.token, body: {} });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('approved');
  });
});

describe('invitations through the fleet', () => {
  it('a reused or expired token is refused (410), another tenant’s invitation is a 404; a removed member’s session ends', async () => {
    const [a, b] = await Promise.all([newTenant('Inv A'), newTenant('Inv B')]);
    const first = await api('POST', '/members/invitations', { key: a.apiKey, body: { email: `once-${randomUUID()}@e2e.test`, role: 'auditor' } });
    expect(first.status).toBe(201);
    expect(first.body.accept_url).toMatch(/\/invitation#token=agwi_/);
    expect((await api('POST', '/members/invitations/accept', { body: { token: first.body.token, password: PASSWORD } })).status).toBe(201);
    const reused = await api('POST', '/members/invitations/accept', { body: { token: first.body.token, password: PASSWORD } });
    expect(reused.status).toBe(410);
    expect(reused.body.detail).toContain('an invitation works once');

    const late = await api('POST', '/members/invitations', { key: a.apiKey, body: { email: `late-${randomUUID()}@e2e.test`, role: 'viewer' } });
    await db.updateTable('member_invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', late.body.id).execute();
    const expired = await api('POST', '/members/invitations/accept', { body: { token: late.body.token, password: PASSWORD } });
    expect(expired.status).toBe(410);
    expect(expired.body.detail).toMatch(/^This invitation expired at .*: ask for a new one$/);

    expect((await api('DELETE', `/members/invitations/${late.body.id}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('GET', '/members/invitations', { key: b.apiKey })).body.count).toBe(0);
    expect((await api('DELETE', `/members/invitations/${late.body.id}`, { key: a.apiKey })).status).toBe(200);

    const m = await memberSession(a, 'approver');
    expect((await api('GET', '/approvals', { token: m.token })).status).toBe(200);
    expect((await api('DELETE', `/members/${m.id}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('DELETE', `/members/${m.id}`, { key: a.apiKey })).body).toMatchObject({ id: m.id, removed: true });
    const after = await api('GET', '/approvals', { token: m.token });
    expect(after.status).toBe(401);
    const owners = (await api('GET', '/members', { key: a.apiKey })).body.members.filter((x: { role: string }) => x.role === 'owner');
    const last = await api('DELETE', `/members/${owners[0].id}`, { key: a.apiKey });
    expect(last.status).toBe(409);
    expect(last.body.detail).toContain('is the last owner of this tenant');
  });
});
