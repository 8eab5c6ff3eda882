/**
 * The soak's verdict (docs/reliability.md "Soak"), apart from the run so it can be tested on recorded series:
 * per series, the level of the first half after the warm-up against the level of the second half; a series
 * grows when the second is above the first by more than its noise floor AND faster than its limit per minute.
 */

/**
 * The limits: growth per minute after the warm-up that fails the soak (`slope`), and how much the second
 * half's level must exceed the first half's for the growth to count as sustained, not noise (`floor`).
 * `null`: reported, not judged on its own. Resident memory is judged as its two parts (docs/reliability.md
 * "Soak"): `native`, what the process holds outside V8's heap (Buffers, sockets, native modules, thread
 * stacks: where a native leak shows), and `heap_committed`, what V8 keeps for its heap, which follows the
 * heap's peaks between major GCs and comes back down; a JS leak raises `heap` measured right after a major
 * GC (`troughs` below).
 */
export const LIMITS: Record<string, { slope: number; floor: number; unit: string; level?: 'median' } | null> = {
  rss: null,
  // a difference of two gauges: after a major GC V8 gives the freed pages back at once (resident falls) but
  // shrinks its committed size some 20 s later, so the difference dips for a window or two (audit: 58 -> 14
  // -> 52 MB). Judged on each window's highest sub-sample and each half's median window: a dip is not a
  // level, while a leak raises every window
  native: { slope: 6, floor: 30, unit: 'MB', level: 'median' },
  heap_committed: { slope: 12, floor: 60, unit: 'MB' },
  heap: { slope: 3, floor: 20, unit: 'MB' },
  fds: { slope: 2, floor: 20, unit: '' },
  loop_p99: { slope: 10, floor: 50, unit: 'ms' },
  pg_connections: { slope: 1, floor: 5, unit: '' },
  nats_unacked: { slope: 200, floor: 500, unit: 'messages' },
  redis_keys: { slope: 100, floor: 500, unit: '' },
  redis_memory: { slope: 2, floor: 10, unit: 'MB' },
};

/** One window: its end (minutes since the start) and each series' value (its lowest sub-sample, or highest for `level: 'median'`). */
export interface Window {
  minute: number;
  values: Record<string, number>;
}

/**
 * A service's heap used right after a major GC (a sub-sample taken once its count of major GCs had grown):
 * the heap it holds live. Between major GCs the heap used also holds what the next one will free, and it
 * climbs for minutes under load, so only these say whether the live heap rises.
 */
export interface Trough {
  minute: number;
  heap: number;
}

export interface Verdict {
  series: string;
  first: number;
  last: number;
  per_min: number;
  rise: number;
  judged: boolean;
  grows: boolean;
  /** why a judged kind of series was not judged this run */
  note?: string;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const round = (x: number, to: number) => Math.round(x * to) / to;

/**
 * The verdict of every series of `windows` (each `<service>.<metric>` or `<store>.<metric>`), the windows
 * after `warmupMinutes` split in two halves. A series' level in a half is its lowest window (a GC sawtooth
 * or a burst only moves the highs), or its median window for `level: 'median'`. The heap (`<service>.heap`)
 * is judged on `troughs[service]` instead: its level in a half is its lowest trough in the half, or when
 * the half saw no major GC the last trough before the half's end (the last the live heap was measured);
 * with none at all it is reported, not judged.
 */
export function judge(windows: Window[], troughs: Record<string, Trough[]>, warmupMinutes: number): { verdicts: Verdict[]; middle: Window[]; last: Window[] } {
  const judged = windows.filter((w) => w.minute > warmupMinutes);
  const half = Math.max(1, Math.floor(judged.length / 2));
  const middle = judged.slice(0, half);
  const last = judged.slice(half);
  const centre = (ws: Window[]) => ws.reduce((a, w) => a + w.minute, 0) / ws.length;
  const minutesApart = Math.max(centre(last) - centre(middle), 1 / 60);
  const middleEnd = middle[middle.length - 1]?.minute ?? warmupMinutes;
  const lastEnd = last[last.length - 1]?.minute ?? middleEnd;
  const levelOf = (k: string, ws: Window[], byMedian: boolean) => (byMedian ? median(ws.map((w) => w.values[k])) : Math.min(...ws.map((w) => w.values[k])));
  /** the live heap in (from, to]: the lowest trough there, else the last one before `to` */
  const heapLevel = (ts: Trough[], from: number, to: number) => {
    const inside = ts.filter((t) => t.minute > from && t.minute <= to);
    if (inside.length) return Math.min(...inside.map((t) => t.heap));
    return ts.filter((t) => t.minute <= to).at(-1)?.heap;
  };
  const verdicts = Object.keys(windows[0]?.values ?? {}).map((k): Verdict => {
    const [service, metric] = k.split('.');
    const limit = LIMITS[metric] ?? null;
    let first = levelOf(k, middle, limit?.level === 'median');
    let end = levelOf(k, last, limit?.level === 'median');
    let note: string | undefined;
    if (metric === 'heap') {
      const ts = troughs[service] ?? [];
      const [a, b] = [heapLevel(ts, warmupMinutes, middleEnd), heapLevel(ts, middleEnd, lastEnd)];
      if (a === undefined || b === undefined) note = 'no major GC seen after the warm-up: the live heap was not measured';
      else [first, end] = [a, b];
    }
    const rise = round(end - first, 10);
    const per_min = round(rise / minutesApart, 100);
    const judgedHere = limit !== null && note === undefined;
    let grows = judgedHere && per_min > limit.slope && rise > limit.floor;
    // native memory is resident minus V8's committed heap: pages V8 takes out of its committed heap but keeps
    // (its pool of free pages, reused when the heap grows again) stay resident and read as native. Native
    // memory that really grows is memory the process holds more of, so its resident memory (same halves,
    // same level) rises past the noise floor too (docs/reliability.md, "Soak")
    if (grows && metric === 'native') grows = levelOf(`${service}.rss`, last, true) - levelOf(`${service}.rss`, middle, true) > (limit?.floor ?? 0);
    return { series: k, first: round(first, 10), last: round(end, 10), per_min, rise, judged: judgedHere, grows, ...(note ? { note } : {}) };
  });
  return { verdicts, middle, last };
}
