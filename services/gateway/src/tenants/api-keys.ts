/**
 * API keys: `agw_` + 32 random bytes (base64url). Only SHA-256 of the key is stored (a fast hash is right
 * for 256-bit random secrets; a password hash would only slow every request). Lookups go through a
 * Redis cache shared by all gateway replicas, so a rotation invalidates the old key on every replica at
 * once. A rotation leaves a tombstone (an empty entry, for longer than an entry lives) instead of deleting
 * the entry, and entries are only ever written where none exists (SET NX): a replica that read the old key
 * from Postgres just before the rotation committed cannot put it back into the cache afterwards.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { type Redis, sha256Hex } from '@agw/shared';
import type { RateLimit, RateLimiter } from '../pipeline/rate-limiter';
import type { ApiKeyRepository } from './api-key.repository';

export interface NewApiKey {
  id: string;
  key: string;
  keyHash: string;
  keyPrefix: string;
  scope: KeyScope;
}

/**
 * `tenant`: the spec's key (every endpoint). `agent`: tool calls, the MCP server and the status of its own
 * queued actions only (docs/auth.md, "Scoped keys").
 */
export type KeyScope = 'tenant' | 'agent';

/**
 * Agent keys are `agw_agent_` + 32 random bytes: the scope is read from the form of a key whose hash was
 * found among the issued keys (no other look-up on the request path); a tenant key never takes that form.
 */
export const AGENT_KEY_PREFIX = 'agw_agent_';
export const scopeOfKey = (key: string): KeyScope => (key.startsWith(AGENT_KEY_PREFIX) ? 'agent' : 'tenant');

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export function newApiKey(scope: KeyScope = 'tenant'): NewApiKey {
  let key: string;
  do key = `${scope === 'agent' ? AGENT_KEY_PREFIX : 'agw_'}${randomBytes(32).toString('base64url')}`;
  while (scopeOfKey(key) !== scope);
  return { id: randomUUID(), key, keyHash: hashApiKey(key), keyPrefix: key.slice(0, scope === 'agent' ? 14 : 10), scope };
}

const CACHE_TTL_SECONDS = 300;
/** a revoked key's tombstone outlives any cache entry written from a read that began before the rotation */
const TOMBSTONE_TTL_SECONDS = 2 * CACHE_TTL_SECONDS;
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
  async authenticate(key: string): Promise<{ tenantId?: string; allowed?: boolean; scope?: KeyScope; keyHash?: string }> {
    if (!key || key.length > 256) return {};
    const hash = hashApiKey(key);
    const r = await this.authenticateHash(hash);
    return r.tenantId ? { ...r, scope: scopeOfKey(key), keyHash: hash } : r;
  }

  private async authenticateHash(hash: string): Promise<{ tenantId?: string; allowed?: boolean }> {
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
      if (cached) return cached; // '' is a revoked key's tombstone: Postgres decides (the key is not active)
    }
    const row = await this.keys.findActiveByHash(hash);
    if (!row) return undefined;
    // a key of the other form than its stored scope is refused (only a key issued before scopes could be one)
    if ((row.scope === 'agent') !== (row.key_prefix.startsWith(AGENT_KEY_PREFIX))) return undefined;
    const a = Buffer.from(row.key_hash, 'hex');
    const b = Buffer.from(hash, 'hex');
    if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
    // NX: never over a tombstone (a rotation that committed after the read above) nor over a fresher entry
    await this.redis.set(cacheKey(hash), row.tenant_id, 'EX', CACHE_TTL_SECONDS, 'NX').catch(() => undefined);
    return row.tenant_id;
  }

  /** The first characters of the tenant's active key (the key itself is never stored). */
  activePrefix(tenantId: string): Promise<string | undefined> {
    return this.keys.activePrefix(tenantId);
  }

  /** Issue an agent-scoped key (shown once). */
  async issueAgentKey(tenantId: string, name: string, createdBy: string): Promise<NewApiKey & { createdAt: Date }> {
    const key = newApiKey('agent');
    const createdAt = await this.keys.insert(tenantId, key, name, createdBy);
    return { ...key, createdAt };
  }

  list(tenantId: string) {
    return this.keys.list(tenantId);
  }

  /** Revoke one agent key of the tenant and evict it from the shared cache (invalid at once on every replica). */
  async revoke(tenantId: string, id: string) {
    const row = await this.keys.revoke(tenantId, id);
    // a tombstone, not a delete: a look-up that read the key before the revocation cannot cache it again
    if (row?.revoked) await this.redis.set(cacheKey(row.key_hash), '', 'EX', TOMBSTONE_TTL_SECONDS);
    return row;
  }

  /** Issue a new tenant key, revoke the old tenant key(s) and replace their shared cache entries by tombstones (agent keys stay). */
  async rotate(tenantId: string): Promise<NewApiKey> {
    const next = newApiKey();
    const revoked = await this.keys.rotate(tenantId, next);
    if (revoked.length) {
      const m = this.redis.multi();
      for (const h of revoked) m.set(cacheKey(h), '', 'EX', TOMBSTONE_TTL_SECONDS);
      await m.exec();
    }
    return next;
  }
}
