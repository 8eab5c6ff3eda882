/**
 * Slow and idle clients at the edge (the EDGE part): sockets that send their headers a line at a time
 * (slowloris), sockets that never send anything, a body that trickles in; each is watched until the
 * gateway closes it, with what it answered.
 */
import net from 'node:net';
import { BASE_URL } from './env';

export interface Watched {
  kind: 'slow_headers' | 'idle' | 'slow_body';
  opened: number;
  closedAfterMs: number | null;
  status: number;
  body: string;
}

const gw = () => new URL(BASE_URL);

/** Open a socket that behaves as `kind` until the server closes it (or `maxMs`). */
export function watch(kind: Watched['kind'], maxMs: number): Promise<Watched> {
  const u = gw();
  return new Promise((resolve) => {
    const w: Watched = { kind, opened: Date.now(), closedAfterMs: null, status: 0, body: '' };
    const chunks: Buffer[] = [];
    const sock = net.connect(Number(u.port), u.hostname);
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => sock.destroy(), maxMs);
    sock.on('error', () => undefined);
    sock.on('data', (c) => chunks.push(c));
    sock.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      const all = Buffer.concat(chunks).toString('latin1');
      w.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(all)?.[1] ?? 0);
      w.body = all.split('\r\n\r\n').slice(1).join('\r\n\r\n');
      const ms = Date.now() - w.opened;
      w.closedAfterMs = ms < maxMs - 50 ? ms : null;
      resolve(w);
    });
    sock.on('connect', () => {
      if (kind === 'slow_headers') {
        sock.write(`GET /api/health HTTP/1.1\r\nHost: ${u.host}\r\n`);
        let i = 0;
        timer = setInterval(() => sock.writable && sock.write(`X-Slow-${i++}: a\r\n`), 500);
      } else if (kind === 'slow_body') {
        sock.write(`POST /api/auth/login HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{`);
        timer = setInterval(() => sock.writable && sock.write(' '), 500);
      }
    });
  });
}

/** Sequential probes of GET /api/health while something else goes on: statuses and the slowest latency. */
export async function probe(count: number, everyMs: number): Promise<{ statuses: number[]; maxMs: number }> {
  const statuses: number[] = [];
  let maxMs = 0;
  for (let i = 0; i < count; i++) {
    const t0 = Date.now();
    try {
      const r = await fetch(`${BASE_URL}/health`, { signal: AbortSignal.timeout(10_000) });
      await r.text();
      statuses.push(r.status);
    } catch {
      statuses.push(0);
    }
    maxMs = Math.max(maxMs, Date.now() - t0);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return { statuses, maxMs };
}
