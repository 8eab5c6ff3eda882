/**
 * Two policy replicas (two TenantPolicies on their own NATS connections, one Postgres): a policy activated
 * on one is in force on the other at once, although the other had it cached for a minute.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type Bus, connectBus, createDb, createLogger, openTestBus, openTestDb } from '@agw/shared';
import { TemplateCatalog } from '../templates/template-catalog';
import { sharedTenantPolicies } from './policy-changes';
import { TenantPolicyRepository } from './tenant-policy.repository';
const prefix = process.env.AGW_STREAM_PREFIX ?? 'TEST'; // the suite's streams (connectBus makes sure they exist)
let db: ReturnType<typeof createDb>;
const buses: Bus[] = [];

beforeAll(async () => {
  db = await openTestDb();
});
afterAll(async () => {
  for (const b of buses) await b.close();
  await db.destroy();
});

it('an activation on one replica is in force on another that had the tenant cached', async () => {
  const catalog = await TemplateCatalog.load(path.resolve(__dirname, '../../templates'));
  const logger = createLogger('test', 'silent');
  const replica = async (name: string) => {
    const bus = await openTestBus(prefix, name);
    buses.push(bus);
    return sharedTenantPolicies(new TenantPolicyRepository(db), catalog, logger, bus, 60_000);
  };
  const a = await replica('policy-a');
  const b = await replica('policy-b');
  const tenantId = randomUUID();
  expect((await b.active(tenantId)).template).toBe('general'); // cached on b for a minute
  await a.set(tenantId, { template: 'financial' });
  const until = Date.now() + 2000;
  let seen = (await b.active(tenantId)).template;
  while (seen !== 'financial' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 10));
    seen = (await b.active(tenantId)).template;
  }
  expect(seen).toBe('financial');
});
