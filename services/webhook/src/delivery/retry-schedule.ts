/**
 * The retry schedule of the spec: attempt 1 at once, attempt 2 after 2 s, attempt 3 after 4 s,
 * attempt 4 after 8 s and final. After the fourth failure the delivery is marked failed.
 */
export const RETRY_DELAYS_MS = [0, 2_000, 4_000, 8_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length;

export type NextStep = { status: 'delivered' } | { status: 'failed' } | { status: 'pending'; delayMs: number };

/** What follows attempt number `attempt` (1-based) with the given result. */
export function nextStep(attempt: number, succeeded: boolean): NextStep {
  if (succeeded) return { status: 'delivered' };
  if (attempt >= MAX_ATTEMPTS) return { status: 'failed' };
  return { status: 'pending', delayMs: RETRY_DELAYS_MS[attempt] };
}
