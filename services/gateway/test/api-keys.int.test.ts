/** API keys against the real Postgres and Redis: hashes only, rotation invalidates the cached old key. */
import { randomUUID } from 'node:crypto';
import { type Db, TEST_REDIS_URL, createRedis, openTestDb, waitForRedis } from '@agw/shared';
import { ApiKeyRepository } from '../src/tenants/api-key.repository';
import { ApiKeyService, hashApiKey, newApiKey } from '../src/tenants/api-keys';
import { createTestTenantWithKey } from './support/tenants';

const redis = createRedis(TEST_REDIS_URL);
const redis2 = createRedis(TEST_REDIS_URL);
let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await waitForRedis(redis);
  await waitForRedis(redis2);
});
afterAll(async () => {
  redis.disconnect();
  redis2.disconnect();
  await db.destroy();
});

const tenantWithKey = () => createTestTenantWithKey(db, 'T');

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

  it('issues agent-scoped keys: their scope is known from the key, revocation is at once, rotation leaves them valid', async () => {
    const svc = new ApiKeyService(new ApiKeyRepository(db), redis);
    const other = new ApiKeyService(new ApiKeyRepository(db), redis2);
    const { id, key } = await tenantWithKey();
    const agent = await svc.issueAgentKey(id, 'billing bot', 'user:owner@example.com');
    expect(agent.key).toMatch(/^agw_agent_[A-Za-z0-9_-]{43}$/);
    expect(await svc.authenticate(agent.key)).toMatchObject({ tenantId: id, scope: 'agent', keyHash: hashApiKey(agent.key) });
    expect(await svc.authenticate(key.key)).toMatchObject({ tenantId: id, scope: 'tenant' });
    const listed = await svc.list(id);
    expect(listed.map((k) => [k.scope, k.key_prefix, k.name])).toEqual(
      expect.arrayContaining([
        ['agent', agent.key.slice(0, 14), 'billing bot'],
        ['tenant', key.key.slice(0, 10), null],
      ]),
    );
    expect(JSON.stringify(listed)).not.toContain(agent.key);
    const rotated = await svc.rotate(id); // the tenant key only
    expect(await other.resolve(agent.key)).toBe(id);
    expect(await svc.activePrefix(id)).toBe(rotated.keyPrefix);
    expect(await svc.revoke(randomUUID(), agent.id)).toBeUndefined(); // another tenant's id
    expect(await svc.revoke(id, rotated.id)).toMatchObject({ revoked: false, scope: 'tenant' });
    expect(await svc.revoke(id, agent.id)).toMatchObject({ revoked: true });
    expect(await other.resolve(agent.key)).toBeUndefined(); // cached on the other replica: gone at once
    expect(await svc.revoke(id, agent.id)).toMatchObject({ revoked: false, scope: 'agent', revoked_at: expect.any(Date) });
  });

  it('never issues a tenant key of the agent form', async () => {
    for (let i = 0; i < 200; i++) expect(newApiKey().key.startsWith('agw_agent_')).toBe(false);
    expect(newApiKey('agent').scope).toBe('agent');
  });

  it('a replica that read the old key just before the rotation committed cannot put it back into the shared cache', async () => {
    const { id, key } = await tenantWithKey();
    // replica B's Postgres read of the (still active) old key returns only after the rotation has committed
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const repo = new ApiKeyRepository(db);
    const slowRepo = Object.create(repo) as ApiKeyRepository;
    slowRepo.findActiveByHash = async (hash: string) => {
      const row = await repo.findActiveByHash(hash);
      await held;
      return row;
    };
    const replicaA = new ApiKeyService(new ApiKeyRepository(db), redis);
    const replicaB = new ApiKeyService(slowRepo, redis2);
    const staleRead = replicaB.resolve(key.key); // not cached yet: goes to Postgres
    await new Promise((r) => setTimeout(r, 50));
    await replicaA.rotate(id);
    release();
    expect(await staleRead).toBe(id); // that request began before the rotation
    // from now on the old key is refused on every replica: the stale read did not re-cache it
    expect(await redis.get(`agw:apikey:${hashApiKey(key.key)}`)).toBe('');
    expect(await replicaA.resolve(key.key)).toBeUndefined();
    expect(await new ApiKeyService(new ApiKeyRepository(db), redis2).resolve(key.key)).toBeUndefined();
  });
});
