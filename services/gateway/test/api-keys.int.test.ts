/** API keys against the real Postgres and Redis: hashes only, rotation invalidates the cached old key. */
import { randomUUID } from 'node:crypto';
import { type Db, createDb, createRedis, migrateToLatest, waitForRedis } from '@agw/shared';
import { ApiKeyRepository } from '../src/tenants/api-key.repository';
import { ApiKeyService, hashApiKey, newApiKey } from '../src/tenants/api-keys';
import { TenantRepository } from '../src/tenants/tenant.repository';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
const redis2 = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
let db: Db;

beforeAll(async () => {
  await migrateToLatest(url);
  db = createDb(url);
  await waitForRedis(redis);
  await waitForRedis(redis2);
});
afterAll(async () => {
  redis.disconnect();
  redis2.disconnect();
  await db.destroy();
});

async function tenantWithKey() {
  const id = randomUUID();
  const key = newApiKey();
  await new TenantRepository(db).createTenant({ id, slug: `t-${id}`, name: 'T' }, key, {});
  return { id, key };
}

describe('API keys', () => {
  it('stores only the SHA-256 of the key', async () => {
    const { id, key } = await tenantWithKey();
    const rows = await db.selectFrom('api_keys').selectAll().where('tenant_id', '=', id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).toBe(hashApiKey(key.key));
    expect(JSON.stringify(rows)).not.toContain(key.key);
  });

  it('resolves a key to its tenant and rejects unknown ones', async () => {
    const svc = new ApiKeyService(new ApiKeyRepository(db), redis);
    const { id, key } = await tenantWithKey();
    expect(await svc.resolve(key.key)).toBe(id);
    expect(await svc.resolve(`${key.key}x`)).toBeUndefined();
    expect(await svc.resolve('')).toBeUndefined();
  });

  it('rotation invalidates the old key at once on every replica, even when cached', async () => {
    const replicaA = new ApiKeyService(new ApiKeyRepository(db), redis);
    const replicaB = new ApiKeyService(new ApiKeyRepository(db), redis2);
    const { id, key } = await tenantWithKey();
    expect(await replicaA.resolve(key.key)).toBe(id); // now cached
    expect(await replicaB.resolve(key.key)).toBe(id);
    const next = await replicaA.rotate(id);
    expect(await replicaB.resolve(key.key)).toBeUndefined();
    expect(await replicaA.resolve(key.key)).toBeUndefined();
    expect(await replicaB.resolve(next.key)).toBe(id);
  });
});
