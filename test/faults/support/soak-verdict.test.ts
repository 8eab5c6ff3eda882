import { type Trough, type Window, judge } from './soak-verdict';

/** The audit service's heap used (MB) per 10 s window of the CI soak that failed on 2026-11-28 (SOAK_MINUTES=5, warm-up 2.5). */
const AUDIT_HEAP: Array<[number, number]> = [
  [0.17, 31], [0.35, 41.8], [0.52, 48.4], [0.69, 59.6], [0.86, 69.5], [1.03, 77.7], [1.2, 35.5], [1.37, 44.4], [1.55, 55.5], [1.72, 61.3],
  [1.89, 68.2], [2.06, 73.8], [2.23, 83.9], [2.41, 90.2], [2.58, 101.3], [2.75, 107.8], [2.92, 30.8], [3.1, 37.3], [3.27, 50], [3.44, 34.5],
  [3.62, 37.9], [3.79, 51.4], [3.96, 53.7], [4.13, 60.3], [4.31, 68.8], [4.48, 72.9], [4.65, 82.8], [4.83, 88.1], [5, 92.1],
];
const windowsOf = (series: string, points: Array<[number, number]>): Window[] => points.map(([minute, v]) => ({ minute, values: { [series]: v } }));

describe('the soak verdict', () => {
  test('a heap that climbs between major GCs, with no major GC in the last half, is not a leak', () => {
    const windows = windowsOf('audit.heap', AUDIT_HEAP);
    // the major GCs of that run: the windows after its three drops
    const troughs: Trough[] = [
      { minute: 1.2, heap: 35.5 },
      { minute: 2.92, heap: 30.8 },
      { minute: 3.44, heap: 34.5 },
    ];
    const [v] = judge(windows, { audit: troughs }, 2.5).verdicts;
    expect(v).toMatchObject({ series: 'audit.heap', first: 30.8, last: 34.5, judged: true, grows: false });
    // the lowest window of each half, as the soak judged it before: the last half's lowest (51.4) was never
    // after a major GC, and read as 15.9 MB per minute of growth
    const [before] = judge(windows, {}, 2.5).verdicts;
    expect(before).toMatchObject({ first: 30.8, last: 51.4, judged: false, grows: false });
    expect(before.note).toMatch(/no major GC/);
  });

  test('a live heap that rises from major GC to major GC grows', () => {
    const points: Array<[number, number]> = Array.from({ length: 30 }, (_, i) => [(i + 1) / 6, 40 + i * 4]);
    const troughs: Trough[] = [2.6, 3.2, 3.8, 4.4, 5].map((minute) => ({ minute, heap: 30 + minute * 20 }));
    const [v] = judge(windowsOf('gateway.heap', points), { gateway: troughs }, 2.5).verdicts;
    expect(v.judged).toBe(true);
    expect(v.grows).toBe(true);
    expect(v.last - v.first).toBeGreaterThan(20);
  });

  test('a half without a major GC takes the live heap last measured before its end', () => {
    const points: Array<[number, number]> = Array.from({ length: 30 }, (_, i) => [(i + 1) / 6, 50]);
    // measured in the warm-up and the first half only; the last half ends with the live heap at its last trough
    const troughs: Trough[] = [
      { minute: 2, heap: 20 },
      { minute: 3, heap: 24 },
    ];
    const [v] = judge(windowsOf('policy.heap', points), { policy: troughs }, 2.5).verdicts;
    expect(v).toMatchObject({ first: 24, last: 24, judged: true, grows: false });
  });

  test('other series keep their lowest window per half', () => {
    const points: Array<[number, number]> = Array.from({ length: 30 }, (_, i) => [(i + 1) / 6, 30 + i * 3]);
    const [v] = judge(windowsOf('audit.fds', points), {}, 2.5).verdicts;
    expect(v.judged).toBe(true);
    expect(v.grows).toBe(true);
    expect(v.first).toBe(75); // the first window after the warm-up (minute 2.67)
  });
});
