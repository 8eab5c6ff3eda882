/**
 * How often one upstream may make the vault read its tools (docs/federation.md, "Connections and limits"):
 * a token bucket per (tenant, upstream) of `burst` reads, one more every `intervalMs`. Registration, a
 * refresh and a `notifications/tools/list_changed` each take a token; a refresh without one is refused
 * (429, with the wait), a list_changed without one is deferred to when the next token comes (a burst of
 * notifications is one read). Per vault replica, in memory: the bound across the fleet is the replicas
 * times this one. At most `maxKeys` buckets are kept, the least recently used dropped first (the longest
 * unused, so the likeliest to be full again, which is the same as having none).
 */
export interface SyncBudgetOptions {
  burst: number;
  intervalMs: number;
  maxKeys?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class SyncBudget {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  private readonly maxKeys: number;

  constructor(private readonly o: SyncBudgetOptions) {
    this.now = o.now ?? Date.now;
    this.maxKeys = o.maxKeys ?? 100_000;
  }

  /** Takes a token: 0 when one was taken, else the milliseconds until one comes (nothing is taken). */
  take(key: string): number {
    const now = this.now();
    const b = this.refill(key, now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.buckets.delete(key);
      this.buckets.set(key, b); // most recently used last
      this.trim();
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) * this.o.intervalMs));
  }

  private refill(key: string, now: number): Bucket {
    const b = this.buckets.get(key) ?? { tokens: this.o.burst, at: now };
    b.tokens = Math.min(this.o.burst, b.tokens + (now - b.at) / this.o.intervalMs);
    b.at = now;
    return b;
  }

  private trim(): void {
    while (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
  }
}
