/**
 * Per-tenant caches of rarely changed data read on the hot path, and their invalidation across replicas.
 *
 * A writer publishes `<prefix>.changes.<topic>.<tenant_id>` on core NATS (not JetStream: no stream holds
 * `changes.>`) right after its write committed; every process that caches that topic drops the tenant's
 * entries when the message arrives. Core NATS may lose a message (a subscriber disconnected at that
 * moment), so every entry also expires after a short TTL, and a subscriber drops everything it cached when
 * its connection comes back. The writer's own process invalidates locally before it answers, so the very
 * next read there sees the change; other processes see it when the message arrives (normally well under
 * a millisecond on one server), at the latest after the TTL.
 *
 * Topics: `credentials` (a tool credential registered or deleted in the vault; cached by the gateway's
 * broker), `settings` (a tenant's settings changed through the gateway; cached by the gateway and the
 * webhook service), `policy` (a tenant's policy activated; cached by the policy service), `upstreams` (a
 * tenant's upstream MCP servers or the state of their tools changed in the vault; cached by the gateway's
 * MCP server and broker, docs/federation.md).
 *
 * TTLs are a minute (TENANT_CACHE_MS): the messages do the invalidating, the TTL only bounds a message lost
 * without a reconnect. Short TTLs made every call of a tenant with a few calls a minute a cold one (the
 * throughput fell with the number of active tenants, docs/history/performance-2026.md).
 */
import { Events, type Subscription } from 'nats';
import type { Bus } from './bus';

export type ChangeTopic = 'credentials' | 'settings' | 'policy' | 'upstreams';

/** How long a per-tenant cache entry followed by change messages lives at most. */
export const TENANT_CACHE_MS = 60_000;

export const changeSubject = (prefix: string, topic: ChangeTopic, tenantId: string) => `${prefix ? `${prefix}.` : ''}changes.${topic}.${tenantId}`;

/** Tell every replica that `tenantId`'s `topic` changed (fire and forget: the TTL covers a lost message). */
export function publishTenantChange(bus: Pick<Bus, 'nc' | 'prefix'>, topic: ChangeTopic, tenantId: string): void {
  try {
    bus.nc.publish(changeSubject(bus.prefix, topic, tenantId));
  } catch {
    // connection closed: the other replicas' entries expire with their TTL
  }
}

/**
 * Call `onChange(tenantId)` for every change of `topic` published by any process, and `onChange(undefined)`
 * (drop everything) when the connection was lost and is back: messages may have been missed meanwhile.
 * Ends when the bus closes.
 */
export function onTenantChange(bus: Pick<Bus, 'nc' | 'prefix'>, topic: ChangeTopic, onChange: (tenantId: string | undefined) => void): Subscription {
  const prefix = changeSubject(bus.prefix, topic, '');
  // a callback subscription runs as each message is parsed: in order with everything else on the connection
  const sub = bus.nc.subscribe(`${prefix}*`, { callback: (_err, m) => m && onChange(m.subject.slice(prefix.length)) });
  void (async () => {
    for await (const s of bus.nc.status()) if (s.type === Events.Reconnect || s.type === Events.Disconnect) onChange(undefined);
  })().catch(() => undefined);
  return sub;
}

/**
 * Values per (tenant, key), each loaded once and kept for `ttlMs` or until its tenant is invalidated. A
 * load in flight when its tenant is invalidated is not kept: the next read loads again. A failed load is
 * not kept either.
 */
export class TenantCache<V> {
  private readonly tenants = new Map<string, Map<string, { at: number; value: Promise<V> }>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxTenants = 10_000,
  ) {}

  get(tenantId: string, key: string, load: () => Promise<V>): Promise<V> {
    let entries = this.tenants.get(tenantId);
    const hit = entries?.get(key);
    const now = Date.now();
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    if (!entries) {
      if (this.tenants.size >= this.maxTenants) this.tenants.clear();
      entries = new Map();
      this.tenants.set(tenantId, entries);
    } else if (entries.size >= this.maxTenants) entries.clear();
    const value = load();
    const entry = { at: now, value };
    entries.set(key, entry);
    const owner = entries;
    value.catch(() => {
      if (owner.get(key) === entry) owner.delete(key);
    });
    return value;
  }

  /** Drop one tenant's entries (undefined: every tenant's). */
  invalidate(tenantId: string | undefined): void {
    if (tenantId === undefined) this.tenants.clear();
    else this.tenants.delete(tenantId);
  }
}
