import { MAX_ATTEMPTS, RETRY_DELAYS_MS, nextStep } from './retry-schedule';

describe('retry schedule', () => {
  it('is the spec: 4 attempts at 0, 2, 4 and 8 seconds', () => {
    expect(RETRY_DELAYS_MS).toEqual([0, 2000, 4000, 8000]);
    expect(MAX_ATTEMPTS).toBe(4);
  });

  it('retries after 2, 4 and 8 s and fails after the fourth failure', () => {
    expect(nextStep(1, false)).toEqual({ status: 'pending', delayMs: 2000 });
    expect(nextStep(2, false)).toEqual({ status: 'pending', delayMs: 4000 });
    expect(nextStep(3, false)).toEqual({ status: 'pending', delayMs: 8000 });
    expect(nextStep(4, false)).toEqual({ status: 'failed' });
    for (const n of [1, 2, 3, 4]) expect(nextStep(n, true)).toEqual({ status: 'delivered' });
  });
});
