/**
 * API keys: `agw_` + 32 random bytes (base64url). Only SHA-256 of the key is stored (a fast hash is right
 * for 256-bit random secrets; a password hash would only slow every request). Lookups go through a
 * Redis cache shared by all gateway replicas, so a rotation that deletes the cache entry invalidates the
 * old key on every replica at once.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Redis } from '@agw/shared';
import type { RateLimit, RateLimiter } from '../pipeline/rate-limiter';
import type { ApiKeyRepository } from './api-key.repository';

export interface NewApiKey {
  id: string;
  key: string;
  keyHash: string;
  keyPrefix: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function newApiKey(): NewApiKey {
  const key = `agw_${randomBytes(32).toString('base64url')}`;
  return { id: randomUUID(), key, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 10) };
}

const CACHE_TTL_SECONDS = 300;
const cacheKey = (hash: string) => `agw:apikey:${hash}`;

/** The tenant's rate limit, applied in the same Redis round trip as the key's cache look-up. */
export interface KeyRateLimit {
  limiter: Pick<RateLimiter, 'resolveAndAllow'>;
  limitOf(tenantId: string): Promise<RateLimit>;
}

export class ApiKeyService {
  /**
   * Key hash -> the tenant it resolved to on this replica: only a guess of which tenant's window to count
   * in the same round trip as the (authoritative) cache look-up; never used to authenticate.
   */
  private readonly lastTenant = new Map<string, string>();

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly redis: Redis,
    private readonly rateLimit?: KeyRateLimit,
  ) {}

  /**
   * `resolve`, and when this replica has seen the key before and it still belongs to the same tenant, the
   * tenant's rate limit counted in the same Redis round trip (`allowed`; undefined: not applied, the
   * caller applies it). Every request authenticated by a key goes on to the rate limit, so counting it
   * here changes nothing but the number of round trips.
   */
  async authenticate(key: string): Promise<{ tenantId?: string; allowed?: boolean }> {
    if (!key || key.length > 256) return {};
    const hash = hashApiKey(key);
    const expected = this.lastTenant.get(hash);
    let notCached = false;
    if (this.rateLimit && expected) {
      const rl = this.rateLimit;
      const r = await rl
        .limitOf(expected)
        .then((limit) => rl.limiter.resolveAndAllow(cacheKey(hash), expected, limit))
        .catch(() => undefined); // Redis or settings unreachable: the plain path below, as without this
      if (r?.tenantId) {
        if (r.tenantId !== expected) this.lastTenant.set(hash, r.tenantId);
        return { tenantId: r.tenantId, allowed: r.allowed };
      }
      notCached = r !== undefined;
    }
    const tenantId = await this.resolveHash(hash, !notCached);
    if (tenantId) {
      if (this.lastTenant.size >= 10_000) this.lastTenant.clear();
      this.lastTenant.set(hash, tenantId);
    } else this.lastTenant.delete(hash);
    return { tenantId };
  }

  /** The tenant owning `key`, or undefined. Constant-time comparison of the stored hash. */
  async resolve(key: string): Promise<string | undefined> {
    if (!key || key.length > 256) return undefined;
    return this.resolveHash(hashApiKey(key), true);
  }

  private async resolveHash(hash: string, tryCache: boolean): Promise<string | undefined> {
    if (tryCache) {
      const cached = await this.redis.get(cacheKey(hash)).catch(() => null);
      if (cached) return cached;
    }
    const row = await this.keys.findActiveByHash(hash);
    if (!row) return undefined;
    const a = Buffer.from(row.key_hash, 'hex');
    const b = Buffer.from(hash, 'hex');
    if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
    await this.redis.set(cacheKey(hash), row.tenant_id, 'EX', CACHE_TTL_SECONDS).catch(() => undefined);
    return row.tenant_id;
  }

  /** The first characters of the tenant's active key (the key itself is never stored). */
  activePrefix(tenantId: string): Promise<string | undefined> {
    return this.keys.activePrefix(tenantId);
  }

  /** Issue a new key, revoke the old ones and evict them from the shared cache. */
  async rotate(tenantId: string): Promise<NewApiKey> {
    const next = newApiKey();
    const revoked = await this.keys.rotate(tenantId, next);
    if (revoked.length) await this.redis.del(...revoked.map(cacheKey));
    return next;
  }
}
