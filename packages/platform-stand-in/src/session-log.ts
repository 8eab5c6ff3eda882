/**
 * One platform session's event log and its live SSE subscribers. Like the real API: every event is kept
 * for `events.list` (chronological, opaque page cursor), and a stream receives only the events appended
 * after it opened (no replay), as SSE frames `id:` / `event: <type>` / `data: <json>`; heartbeats are
 * `event: ping` frames (the SDK skips them).
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export type PlatformEvent = { id: string; type: string; processed_at: string | null } & Record<string, unknown>;

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

export class SessionLog {
  readonly events: PlatformEvent[] = [];
  private readonly subscribers = new Set<ServerResponse>();

  append(type: string, fields: Record<string, unknown> = {}): PlatformEvent {
    const e: PlatformEvent = { id: newId('sevt'), type, ...fields, processed_at: new Date().toISOString() };
    this.events.push(e);
    const frame = `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
    for (const res of this.subscribers) res.write(frame);
    return e;
  }

  /** A page of the history: `page` is the opaque cursor of a previous answer. */
  page(limit: number, page: string | undefined): { data: PlatformEvent[]; next_page: string | null } {
    const start = page ? Number(Buffer.from(page, 'base64url').toString()) || 0 : 0;
    const data = this.events.slice(start, start + limit);
    const next = start + data.length;
    return { data, next_page: next < this.events.length ? Buffer.from(String(next)).toString('base64url') : null };
  }

  subscribe(res: ServerResponse, heartbeatMs: number): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(': connected\n\n');
    this.subscribers.add(res);
    const beat = setInterval(() => res.write('event: ping\ndata: {}\n\n'), heartbeatMs);
    beat.unref();
    res.on('close', () => {
      clearInterval(beat);
      this.subscribers.delete(res);
    });
  }

  get connections(): number {
    return this.subscribers.size;
  }

  /** Cut every open stream mid-flight (the socket is destroyed, as a network drop would). */
  dropStreams(): void {
    for (const res of this.subscribers) res.socket?.destroy();
    this.subscribers.clear();
  }

  close(): void {
    for (const res of this.subscribers) res.end();
    this.subscribers.clear();
  }
}
