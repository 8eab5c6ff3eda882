/**
 * An API key's cache look-up and its tenant's rate limit in one Redis round trip (ApiKeyService.authenticate
 * with RateLimiter.resolveAndAllow), against the real Postgres and Redis: the same answers and the same
 * counting as the look-up followed by RateLimiter.allow, rotation still refuses the old key at once.
 */
import { randomUUID } from 'node:crypto';
import { type Db, TEST_REDIS_URL, createRedis, openTestDb, waitForRedis } from '@agw/shared';
import { RateLimiter, type RateLimit } from '../src/pipeline/rate-limiter';
import { ApiKeyRepository } from '../src/tenants/api-key.repository';
import { ApiKeyService, hashApiKey } from '../src/tenants/api-keys';
import { createTestTenantWithKey } from './support/tenants';

const redis = createRedis(TEST_REDIS_URL);
const limiter = new RateLimiter(redis);
let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await waitForRedis(redis);
});
afterAll(async () => {
  redis.disconnect();
  await db.destroy();
});

const tenantWithKey = () => createTestTenantWithKey(db, 'T');

/** What the two middlewares do with the answer: authenticate, then the rate limit unless already counted. */
async function request(svc: ApiKeyService, key: string, limit: RateLimit): Promise<{ tenantId?: string; allowed?: boolean; merged: boolean }> {
  const { tenantId, allowed } = await svc.authenticate(key);
  if (!tenantId) return { merged: false };
  return { tenantId, allowed: allowed ?? (await limiter.allow(tenantId, limit)), merged: allowed !== undefined };
}

it('counts the window exactly as the separate rate limit does, in the key look-up from the second request on', async () => {
  const { id, key } = await tenantWithKey();
  const limit = { rps: 10, burst: 3 }; // 3 per 300 ms
  const svc = new ApiKeyService(new ApiKeyRepository(db), redis, { limiter, limitOf: async () => limit });
  const answers = [];
  for (let i = 0; i < 5; i++) answers.push(await request(svc, key.key, limit));
  expect(answers.map((a) => a.tenantId)).toEqual([id, id, id, id, id]);
  expect(answers.map((a) => a.allowed)).toEqual([true, true, true, false, false]);
  expect(answers.map((a) => a.merged)).toEqual([false, true, true, true, true]);
  await new Promise((r) => setTimeout(r, 350));
  expect(await request(svc, key.key, limit)).toEqual({ tenantId: id, allowed: true, merged: true });
  // one window for both paths: the separate limiter sees what the merged one counted
  expect(await limiter.allow(id, limit)).toBe(true);
  expect(await limiter.allow(id, limit)).toBe(true);
  expect(await limiter.allow(id, limit)).toBe(false);
});

it('a rotated key is refused at once although this replica knew its tenant; an evicted cache entry is looked up again', async () => {
  const { id, key } = await tenantWithKey();
  const limit = { rps: 1000, burst: 1000 };
  const svc = new ApiKeyService(new ApiKeyRepository(db), redis, { limiter, limitOf: async () => limit });
  expect((await request(svc, key.key, limit)).tenantId).toBe(id);
  expect(await request(svc, key.key, limit)).toMatchObject({ tenantId: id, merged: true });
  await redis.del(`agw:apikey:${hashApiKey(key.key)}`); // cache entry expired
  expect(await request(svc, key.key, limit)).toMatchObject({ tenantId: id, allowed: true, merged: false });
  expect(await request(svc, key.key, limit)).toMatchObject({ tenantId: id, merged: true });
  const next = await svc.rotate(id);
  expect(await svc.authenticate(key.key)).toEqual({});
  expect(await svc.authenticate(key.key)).toEqual({});
  expect((await request(svc, next.key, limit)).tenantId).toBe(id);
  expect(await svc.authenticate('')).toEqual({});
});

it('answers for the key’s tenant only, never counting another tenant’s window', async () => {
  const a = await tenantWithKey();
  const limit = { rps: 1, burst: 1 };
  // the cache says the key is a's; the replica expected another tenant: a's tenant, nothing counted
  const other = randomUUID();
  await redis.set(`agw:apikey:${hashApiKey(a.key.key)}`, a.id, 'EX', 60);
  expect(await limiter.resolveAndAllow(`agw:apikey:${hashApiKey(a.key.key)}`, other, limit)).toEqual({ tenantId: a.id, allowed: undefined });
  expect(await limiter.allow(other, limit)).toBe(true); // other's window was not touched
  expect(await limiter.resolveAndAllow(`agw:apikey:${hashApiKey(a.key.key)}`, a.id, limit)).toEqual({ tenantId: a.id, allowed: true });
  expect(await limiter.resolveAndAllow(`agw:apikey:${hashApiKey(a.key.key)}`, a.id, limit)).toEqual({ tenantId: a.id, allowed: false });
  expect(await limiter.resolveAndAllow(`agw:apikey:${'0'.repeat(64)}`, a.id, limit)).toEqual({ tenantId: null });
});
