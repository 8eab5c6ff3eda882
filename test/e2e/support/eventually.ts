/** Waiting without timed assertions: `sleep`, and `eventually`, which polls until a condition holds. Node built-ins only (test/faults imports it too). */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` every `everyMs` until it returns a truthy value, or throw (with the last error it threw) once `timeoutMs` passes. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, everyMs = 200): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}
