import { type Redis, TEST_REDIS_URL, createRedis, waitForRedis } from '@agw/shared';
import { randomUUID } from 'node:crypto';
import { type SsoPending, SsoStateStore } from './sso-state';

describe('the SSO state store (real Redis)', () => {
  let redis: Redis;
  let store: SsoStateStore;
  const prefix = `agw:test:${process.env.AGW_STREAM_PREFIX ?? 'T'}:${randomUUID()}:`;
  beforeAll(async () => {
    redis = createRedis(TEST_REDIS_URL);
    await waitForRedis(redis);
    store = new SsoStateStore(redis, prefix, 60);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  const pending = (browserHash: string): SsoPending => ({ tenantId: randomUUID(), codeVerifier: 'v'.repeat(43), nonce: 'n', browserHash, configVersion: new Date().toISOString(), createdAt: new Date().toISOString() });

  it('a state is taken once, by the browser that started it', async () => {
    const b = SsoStateStore.newBrowserBinding();
    expect(b.cookie).not.toBe(b.hash);
    const p = pending(b.hash);
    await store.save('s1', p);
    expect(await redis.ttl(`${prefix}s1`)).toBeGreaterThan(50);
    expect(await store.take('s1', b.cookie)).toEqual({ ok: true, pending: p });
    expect(await store.take('s1', b.cookie)).toEqual({ ok: false, reason: 'unknown_state' });
  });

  it('another browser (or none) is refused, and the state is spent by the attempt', async () => {
    const b = SsoStateStore.newBrowserBinding();
    await store.save('s2', pending(b.hash));
    expect(await store.take('s2', SsoStateStore.newBrowserBinding().cookie)).toEqual({ ok: false, reason: 'browser_mismatch' });
    expect(await store.take('s2', b.cookie)).toEqual({ ok: false, reason: 'unknown_state' });
    await store.save('s3', pending(b.hash));
    expect(await store.take('s3', undefined)).toEqual({ ok: false, reason: 'browser_mismatch' });
  });

  it('unknown, empty and oversized states are unknown; a state is never overwritten', async () => {
    expect(await store.take('nope', 'x')).toEqual({ ok: false, reason: 'unknown_state' });
    expect(await store.take('', 'x')).toEqual({ ok: false, reason: 'unknown_state' });
    expect(await store.take('x'.repeat(300), 'x')).toEqual({ ok: false, reason: 'unknown_state' });
    const b = SsoStateStore.newBrowserBinding();
    await store.save('s4', pending(b.hash));
    await expect(store.save('s4', pending(b.hash))).rejects.toThrow(/collision/);
  });

  it('two takes at once: exactly one gets it', async () => {
    const b = SsoStateStore.newBrowserBinding();
    await store.save('s5', pending(b.hash));
    const r = await Promise.all([store.take('s5', b.cookie), store.take('s5', b.cookie), store.take('s5', b.cookie)]);
    expect(r.filter((x) => x.ok)).toHaveLength(1);
  });
});
