/** The sliding window against the real local Redis. */
import { randomUUID } from 'node:crypto';
import { TEST_REDIS_URL, createRedis, waitForRedis } from '@agw/shared';
import { RateLimiter } from '../src/pipeline/rate-limiter';

const redis = createRedis(TEST_REDIS_URL);
const limiter = new RateLimiter(redis);

beforeAll(() => waitForRedis(redis));
afterAll(() => redis.disconnect());

describe('per-tenant sliding window', () => {
  it('lets a burst through, then refuses until the window slides', async () => {
    const tenant = randomUUID();
    const limit = { rps: 10, burst: 5 }; // 5 requests per 500 ms window
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await limiter.allow(tenant, limit));
    expect(results).toEqual([true, true, true, true, true, false, false]);
    await new Promise((r) => setTimeout(r, 600));
    expect(await limiter.allow(tenant, limit)).toBe(true);
  });

  it('counts tenants separately', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const limit = { rps: 1, burst: 1 };
    expect(await limiter.allow(a, limit)).toBe(true);
    expect(await limiter.allow(a, limit)).toBe(false);
    expect(await limiter.allow(b, limit)).toBe(true);
  });

  it('is shared by every client (replicas): a second connection sees the same window', async () => {
    const otherRedis = createRedis(TEST_REDIS_URL);
    await waitForRedis(otherRedis);
    const other = new RateLimiter(otherRedis);
    const t = randomUUID();
    const limit = { rps: 1, burst: 2 };
    expect(await limiter.allow(t, limit)).toBe(true);
    expect(await other.allow(t, limit)).toBe(true);
    expect(await limiter.allow(t, limit)).toBe(false);
    otherRedis.disconnect();
  });
});
