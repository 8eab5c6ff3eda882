/**
 * The read model of tenant_settings (src/tenants/tenant-settings.read-model.ts) against the real Postgres
 * and NATS, with two replicas of a reader on their own NATS connections and the owner writing the row and
 * publishing the change as the gateway does: a committed change reaches `current` at once (a rotated
 * webhook secret is never read stale), `cached` is dropped on every replica by the change message, a
 * replica started after the change (a restart) reads it, and only the keys other services use are exposed.
 */
import { randomUUID } from 'node:crypto';
import { type NatsConnection, connect } from 'nats';
import { publishTenantChange } from '../src/bus/tenant-changes';
import type { Db } from '../src/db/database';
import { TEST_NATS_URL, openTestDb } from '../src/test-stores';
import { TenantSettingsReadModel, tenantSettingsView } from '../src/tenants/tenant-settings.read-model';

const prefix = `TS${randomUUID().replace(/-/g, '').slice(0, 10)}`;
let db: Db;
const conns: NatsConnection[] = [];
const bus = async () => {
  const nc = await connect({ servers: TEST_NATS_URL });
  conns.push(nc);
  return { nc, prefix };
};

beforeAll(async () => {
  db = await openTestDb();
});

afterAll(async () => {
  for (const nc of conns) await nc.close();
  await db.destroy();
});

/** The owner's write: the row committed, then the change published (services/gateway/src/tenants). */
async function ownerWrites(owner: Awaited<ReturnType<typeof bus>>, tenantId: string, settings: Record<string, unknown>) {
  await db
    .insertInto('tenant_settings')
    .values({ tenant_id: tenantId, settings: JSON.stringify(settings) })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ settings: JSON.stringify(settings), updated_at: new Date() }))
    .execute();
  publishTenantChange(owner, 'settings', tenantId);
  await owner.nc.flush();
}

const until = async (check: () => Promise<boolean>, ms = 2000) => {
  const end = Date.now() + ms;
  while (!(await check()) && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  return check();
};

test('the view exposes the keys other services use, typed, and nothing else', () => {
  const v = tenantSettingsView({
    webhook_url: 'https://hooks.example.com/a',
    webhook_secret_sealed: '{"v":1}',
    webhook_events: ['action.denied', 7],
    siem_export: { url: 'https://siem.example.com', format: 'jsonl' },
    siem_token_sealed: '{"v":2}',
    session_anomaly_threshold: 0.6,
    approval_expiry_seconds: 300,
    policy_template: 'financial',
    required_approvers: 2,
  });
  expect(v).toEqual({
    webhook: { url: 'https://hooks.example.com/a', secret: null, sealedSecret: '{"v":1}', events: ['action.denied'], siem: { url: 'https://siem.example.com', format: 'jsonl', sealedToken: '{"v":2}' } },
    session: { anomalyThreshold: 0.6, approvalExpirySeconds: 300 },
  });
  expect(tenantSettingsView({ session_anomaly_threshold: 2, approval_expiry_seconds: 0, webhook_url: '' })).toEqual({
    webhook: { url: null, secret: null, sealedSecret: null, events: undefined, siem: null },
    session: { anomalyThreshold: undefined, approvalExpirySeconds: undefined },
  });
});

test('a change committed by the owner: current at once on every replica, cached dropped by the change message, read after a restart', async () => {
  const tenantId = randomUUID();
  await db.insertInto('tenants').values({ id: tenantId, slug: `ts-${tenantId}`, name: 'Settings read model' }).execute();
  const owner = await bus();
  await ownerWrites(owner, tenantId, { webhook_url: 'https://hooks.example.com/a', webhook_secret_sealed: 'sealed-1', session_anomaly_threshold: 0.5 });

  // two replicas of a reader, each with its own connection; a cache that only a lost message could keep stale
  const replicas = [new TenantSettingsReadModel(db, 3_600_000), new TenantSettingsReadModel(db, 3_600_000)];
  for (const r of replicas) {
    r.followChanges(await bus());
    expect((await r.cached(tenantId)).webhook.sealedSecret).toBe('sealed-1');
  }
  await Promise.all(conns.map((nc) => nc.flush()));

  // the secret is rotated: an attempt (current) signs with the new one at once, before any message
  await db.updateTable('tenant_settings').set({ settings: JSON.stringify({ webhook_url: 'https://hooks.example.com/b', webhook_secret_sealed: 'sealed-2', session_anomaly_threshold: 0.9 }) }).where('tenant_id', '=', tenantId).execute();
  for (const r of replicas) expect((await r.current(tenantId)).webhook).toMatchObject({ url: 'https://hooks.example.com/b', sealedSecret: 'sealed-2' });
  // the cached view is the old one until the owner publishes the change, then every replica drops it
  expect((await replicas[0].cached(tenantId)).webhook.sealedSecret).toBe('sealed-1');
  publishTenantChange(owner, 'settings', tenantId);
  await owner.nc.flush();
  for (const r of replicas) expect(await until(async () => (await r.cached(tenantId)).webhook.sealedSecret === 'sealed-2')).toBe(true);
  for (const r of replicas) expect((await r.cached(tenantId)).session.anomalyThreshold).toBe(0.9);

  // removed through the owner: gone everywhere
  await ownerWrites(owner, tenantId, {});
  for (const r of replicas) expect(await until(async () => (await r.cached(tenantId)).webhook.url === null)).toBe(true);

  // a replica started after the change (a restart) reads the row as committed
  await ownerWrites(owner, tenantId, { webhook_url: 'https://hooks.example.com/c', webhook_secret_sealed: 'sealed-3' });
  const restarted = new TenantSettingsReadModel(db);
  restarted.followChanges(await bus());
  expect((await restarted.cached(tenantId)).webhook).toMatchObject({ url: 'https://hooks.example.com/c', sealedSecret: 'sealed-3' });
  expect((await restarted.cached(randomUUID())).webhook.url).toBeNull();
});
