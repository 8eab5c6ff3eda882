/**
 * The human-only gate of the settings (docs/auth.md, "Approvals"): PATCH /dashboard/settings with
 * `approvals_require_human: false` turns a human-only gate off, so only a signed-in human's session may
 * send it where the gate is on; an API key, an agent key, an OAuth token or a session made from an API key
 * get a 403 that says so, and nothing is changed. Turning it on stays open to the tenant key. The gateway's
 * settings route and service over real HTTP against the real Postgres, with the caller set as the
 * authentication middleware sets it.
 */
import { type Db, openTestDb } from '@agw/shared';
import type { GatewayDeps } from '../src/deps';
import { settingsRoutes } from '../src/http/routes/settings.routes';
import { SettingsRepository } from '../src/tenants/settings.repository';
import { SettingsService } from '../src/tenants/settings.service';
import { type ServedRoutes, asTestCaller, serveRoutes, stubPolicy, testSettings } from './support/served-routes';
import { createTestTenant } from './support/tenants';

let db: Db;
let served: ServedRoutes;

beforeAll(async () => {
  db = await openTestDb();
  const settings = testSettings(db);
  served = await serveRoutes((app) => {
    app.use(asTestCaller);
    app.use(settingsRoutes({ settings, apiKeys: { activePrefix: async () => 'agw_' } } as unknown as GatewayDeps));
  });
});
afterAll(async () => {
  await served.close();
  await db.destroy();
});

const newTenant = (settings: Record<string, unknown> = { approvals_require_human: true }) => createTestTenant(db, 'H', settings);

async function patch(tenantId: string, caller: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${served.base}/dashboard/settings`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-test-tenant': tenantId, 'x-test-caller': caller }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

const stored = async (tenantId: string) => new SettingsRepository(db).get(tenantId);

it.each([
  ['tenant_key', 'an API key cannot'],
  ['agent_key', 'an agent-scoped API key cannot'],
  ['oauth', "an MCP client's OAuth token cannot"],
  ['key_session', 'a session token made from an API key cannot'],
])('%s cannot turn approvals_require_human off: 403 saying who may, nothing saved', async (caller, says) => {
  const tenantId = await newTenant();
  const r = await patch(tenantId, caller, { approvals_require_human: false, approval_expiry_seconds: 600 });
  expect(r.status).toBe(403);
  expect(r.body.detail).toContain('Turning approvals_require_human off needs a signed-in human');
  expect(r.body.detail).toContain(says);
  expect(await stored(tenantId)).toMatchObject({ approvals_require_human: true });
  expect((await stored(tenantId)).approval_expiry_seconds).toBeUndefined();
});

it('a signed-in human can turn it off; the tenant key can turn it on again', async () => {
  const tenantId = await newTenant();
  const off = await patch(tenantId, 'human', { approvals_require_human: false });
  expect(off.status).toBe(200);
  expect(off.body).toMatchObject({ approvals_require_human: false });
  const on = await patch(tenantId, 'tenant_key', { approvals_require_human: true });
  expect(on.status).toBe(200);
  expect(on.body).toMatchObject({ approvals_require_human: true });
  expect((await patch(tenantId, 'tenant_key', { approvals_require_human: false })).status).toBe(403);
});

it('the tenant key may send the value a tenant that never had the gate already has, and change other settings', async () => {
  const tenantId = await newTenant({});
  const same = await patch(tenantId, 'tenant_key', { approvals_require_human: false, approval_expiry_seconds: 600 });
  expect(same.status).toBe(200);
  expect(same.body).toMatchObject({ approvals_require_human: false, approval_expiry_seconds: 600 });
  const gated = await newTenant();
  expect((await patch(gated, 'tenant_key', { approval_expiry_seconds: 900 })).status).toBe(200);
  expect(await stored(gated)).toMatchObject({ approvals_require_human: true, approval_expiry_seconds: 900 });
});

it('under the row lock: a key that read the gate off loses when a human turned it on meanwhile', async () => {
  const tenantId = await newTenant({});
  const repo = new SettingsRepository(db);
  const service = new SettingsService(repo, stubPolicy, { rps: 50, burst: 100 });
  // the human's change lands between the key's first look and its write
  const realGet = repo.get.bind(repo);
  let first = true;
  repo.get = async (t, conn) => {
    const s = await realGet(t, conn);
    if (first) {
      first = false;
      await repo.merge(tenantId, { approvals_require_human: true });
    }
    return s;
  };
  await expect(service.update(tenantId, { approvals_require_human: false }, { human: false, caller: 'an API key' })).rejects.toMatchObject({ code: 'forbidden' });
  expect(await stored(tenantId)).toMatchObject({ approvals_require_human: true });
});

it('oauth_grants_end_on_key_rotation (on by default) is human-only to turn off, open to the key to turn on', async () => {
  const tenantId = await newTenant({});
  const byKey = await patch(tenantId, 'tenant_key', { oauth_grants_end_on_key_rotation: false });
  expect(byKey.status).toBe(403);
  expect(byKey.body.detail).toContain('Turning oauth_grants_end_on_key_rotation off needs a signed-in human');
  expect((await stored(tenantId)).oauth_grants_end_on_key_rotation).toBeUndefined();
  expect((await patch(tenantId, 'tenant_key', { oauth_grants_end_on_key_rotation: true })).status).toBe(200);
  const byHuman = await patch(tenantId, 'human', { oauth_grants_end_on_key_rotation: false });
  expect(byHuman.status).toBe(200);
  expect(byHuman.body).toMatchObject({ oauth_grants_end_on_key_rotation: false });
  // already off: the key may send the value in force
  expect((await patch(tenantId, 'tenant_key', { oauth_grants_end_on_key_rotation: false })).status).toBe(200);
});

it('required_approvers (four eyes) is human-only to lower, open to the key to raise', async () => {
  const tenantId = await newTenant({});
  expect((await patch(tenantId, 'tenant_key', { required_approvers: 3 })).status).toBe(200);
  const byKey = await patch(tenantId, 'tenant_key', { required_approvers: 2 });
  expect(byKey.status).toBe(403);
  expect(byKey.body.detail).toBe("Lowering required_approvers (from 3 to 2) needs a signed-in human: sign in (POST /api/auth/login) and send the session token; an API key cannot (raising it is open to the tenant's API key)");
  expect((await stored(tenantId)).required_approvers).toBe(3);
  expect((await patch(tenantId, 'tenant_key', { required_approvers: 3 })).status).toBe(200);
  const byHuman = await patch(tenantId, 'human', { required_approvers: 1 });
  expect(byHuman.status).toBe(200);
  expect(byHuman.body).toMatchObject({ required_approvers: 1 });
});
