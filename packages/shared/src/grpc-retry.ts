/**
 * Retries of a peer call, made in one place: `createClient` (grpc.ts) sends a call again when its options
 * carry a `retry` policy, so a call site names its policy instead of writing a loop. The same request goes
 * out on every attempt, so a request that carries an idempotency key (the audit append's `appendKey`) is
 * sent again under that one key, and the peer answers a key it has already served with that answer: one
 * record however many attempts reached it (docs/audit.md, "Idempotent appends"). A request without such a
 * key must not be given a retry policy.
 *
 * @example
 * ```ts
 * // sent again while the audit service or its Postgres is unreachable, for at most 15 s
 * await audit.appendStream(request, { retry: { budgetMs: 15_000 } });
 * ```
 */
import { isDependencyDown } from './errors';

export interface RetryPolicy {
  /** most attempts in all (default: unbounded, the budget bounds them) */
  attempts?: number;
  /** no attempt starts after this many ms from the first (default: unbounded, `attempts` bounds them) */
  budgetMs?: number;
  /** the wait after the first failed attempt (default 50 ms) */
  delayMs?: number;
  /** each next wait is `backoff` times the last (default 2), at most `maxDelayMs` (default 1000) */
  backoff?: number;
  maxDelayMs?: number;
  /** which failures are sent again (default: the peer or its store unreachable, `isDependencyDown`) */
  when?: (e: unknown) => boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `call` until it succeeds, fails with an error `when` does not retry, or the policy's attempts or budget are spent. */
export async function withRetry<T>(call: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const { attempts = Infinity, delayMs = 50, backoff = 2, maxDelayMs = 1000, when = isDependencyDown } = policy;
  if (!Number.isFinite(attempts) && policy.budgetMs === undefined) throw new Error('a retry policy needs attempts or a budget');
  const giveUpAt = policy.budgetMs === undefined ? Infinity : Date.now() + policy.budgetMs;
  for (let attempt = 1, wait = delayMs; ; attempt++, wait = Math.min(wait * backoff, maxDelayMs)) {
    try {
      return await call();
    } catch (e) {
      if (!when(e) || attempt >= attempts || Date.now() + wait > giveUpAt) throw e;
      await sleep(wait);
    }
  }
}
