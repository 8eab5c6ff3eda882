import { SyncBudget } from './sync-budget';

describe('SyncBudget', () => {
  test('a burst, then one token per interval; the wait says when the next comes; keys are independent', () => {
    let now = 1_000_000;
    const b = new SyncBudget({ burst: 2, intervalMs: 1000, now: () => now });
    expect(b.take('a')).toBe(0);
    expect(b.take('a')).toBe(0);
    expect(b.take('a')).toBe(1000);
    now += 400;
    expect(b.take('a')).toBe(600);
    expect(b.take('b')).toBe(0);
    now += 600;
    expect(b.take('a')).toBe(0);
    expect(b.take('a')).toBe(1000);
    now += 10_000;
    // refilled to the burst, never beyond
    expect(b.take('a')).toBe(0);
    expect(b.take('a')).toBe(0);
    expect(b.take('a')).toBeGreaterThan(0);
  });

  test('at most maxKeys buckets are kept, the least recently used dropped first', () => {
    const now = 0;
    const b = new SyncBudget({ burst: 1, intervalMs: 1000, maxKeys: 2, now: () => now });
    expect(b.take('a')).toBe(0);
    expect(b.take('b')).toBe(0);
    expect(b.take('c')).toBe(0);
    // 'a' was dropped: a full bucket again; 'c' is still empty
    expect(b.take('a')).toBe(0);
    expect(b.take('c')).toBe(1000);
  });
});
