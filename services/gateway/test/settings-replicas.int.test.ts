/**
 * Tenant settings across two gateway replicas (real Postgres, two NATS connections): a change saved on one
 * replica reaches the other's settings cache as soon as the change message arrives, not after the cache's age.
 */
import { randomUUID } from 'node:crypto';
import { type Db, TEST_NATS_URL, onTenantChange, openTestDb, publishTenantChange } from '@agw/shared';
import { type NatsConnection, connect } from 'nats';
import type { PolicyClient } from '../src/clients/grpc-clients';
import { newApiKey } from '../src/tenants/api-keys';
import { SettingsRepository } from '../src/tenants/settings.repository';
import { SettingsService } from '../src/tenants/settings.service';
import { TenantRepository } from '../src/tenants/tenant.repository';

const prefix = `SRP${randomUUID().replace(/-/g, '').slice(0, 10)}`;
const conns: NatsConnection[] = [];
let db: Db;

const policy = { getTenantPolicy: async () => ({ policyTemplate: 'general', policyConfigJson: '{}', customPolicy: '' }) } as unknown as PolicyClient;

/** the vault's SealSecret/OpenSecret stand-in: this test reads no secret */
const sealer = { seal: async (_t: string, secret: string) => `sealed:${secret}`, open: async (_t: string, sealed: string) => sealed.slice('sealed:'.length) };

/** one gateway replica's settings service, wired as gateway.ts wires it */
async function replica(): Promise<SettingsService> {
  const nc = await connect({ servers: TEST_NATS_URL });
  conns.push(nc);
  const bus = { nc, prefix };
  const settings = new SettingsService(new SettingsRepository(db), policy, { rps: 50, burst: 100 }, async () => undefined, (t) => publishTenantChange(bus, 'settings', t), sealer);
  onTenantChange(bus, 'settings', (t) => settings.invalidate(t));
  await nc.flush();
  return settings;
}

beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  for (const nc of conns) await nc.close();
  await db.destroy();
});

it('a rate limit saved on one replica applies on the other at once', async () => {
  const tenantId = randomUUID();
  await new TenantRepository(db).createTenant({ id: tenantId, slug: `s-${tenantId}`, name: 'S' }, newApiKey(), {});
  const a = await replica();
  const b = await replica();
  expect(await b.rateLimit(tenantId)).toEqual({ rps: 50, burst: 100 }); // now cached on b (for a minute)
  await a.update(tenantId, { rate_limit_rps: 1, rate_limit_burst: 6 });
  const t0 = Date.now();
  while ((await b.rateLimit(tenantId)).burst !== 6) {
    if (Date.now() - t0 > 1000) throw new Error('replica b still has the old limit after 1 s (without the change message its cache would keep it a minute)');
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(await b.rateLimit(tenantId)).toEqual({ rps: 1, burst: 6 });
});

it('whether a tenant has a webhook (where its decision events go) follows a saved URL on both replicas', async () => {
  const tenantId = randomUUID();
  await new TenantRepository(db).createTenant({ id: tenantId, slug: `w-${tenantId}`, name: 'W' }, newApiKey(), {});
  const a = await replica();
  const b = await replica();
  expect(await a.hasWebhook(tenantId)).toBe(false);
  expect(await b.hasWebhook(tenantId)).toBe(false); // cached on b
  const until = async (s: SettingsService, want: boolean) => {
    const t0 = Date.now();
    while ((await s.hasWebhook(tenantId)) !== want) {
      if (Date.now() - t0 > 1000) throw new Error(`hasWebhook still ${!want} after 1 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await a.update(tenantId, { webhook_url: 'https://hooks.example.com/agw' });
  expect(await a.hasWebhook(tenantId)).toBe(true); // the replica that saved it: the next call
  await until(b, true);
  await a.update(tenantId, { webhook_url: null });
  expect(await a.hasWebhook(tenantId)).toBe(false);
  await until(b, false);
});
