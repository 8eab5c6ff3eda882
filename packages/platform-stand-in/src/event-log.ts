/**
 * One session's event log and its live SSE subscribers. Like the real API, every event is kept for
 * `events.list` (chronological, opaque page cursor) while a stream receives only the events appended
 * after it opened (no replay). Each SSE frame names its event (`event: <type>`), carries `id: <event id>`
 * and `data: <json>`: the SDK skips frames without an `event:` line. Heartbeats are `event: ping` frames,
 * which the SDK skips too.
 */
import type { ServerResponse } from 'node:http';
import { invalidRequest } from './api-errors';
import { newId } from './ids';

/** A stored session event: `id`, `type`, `processed_at` and the fields of its type. */
export type PlatformEvent = { id: string; type: string; processed_at: string } & Record<string, unknown>;

export interface EventPage {
  data: PlatformEvent[];
  next_page: string | null;
}

const encodeCursor = (index: number) => Buffer.from(`after:${index}`).toString('base64url');

function decodeCursor(page: string): number {
  const m = /^after:(\d+)$/.exec(Buffer.from(page, 'base64url').toString('utf8'));
  if (!m) throw invalidRequest('page is not a cursor this API returned');
  return Number(m[1]);
}

export class EventLog {
  readonly events: PlatformEvent[] = [];
  private readonly subscribers = new Set<ServerResponse>();

  append(type: string, fields: Record<string, unknown> = {}): PlatformEvent {
    const event: PlatformEvent = { id: newId('sevt'), type, ...fields, processed_at: new Date().toISOString() };
    this.events.push(event);
    const frame = `event: ${event.type}\nid: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`;
    for (const res of this.subscribers) res.write(frame);
    return event;
  }

  /** `limit` events from the cursor `page` (a previous answer's `next_page`), oldest first. */
  page(limit: number, page?: string): EventPage {
    const start = page ? decodeCursor(page) : 0;
    const data = this.events.slice(start, start + limit);
    const next = start + data.length;
    return { data, next_page: next < this.events.length ? encodeCursor(next) : null };
  }

  /** Turns `res` into a live stream of the events appended from now on, with `event: ping` heartbeats. */
  subscribe(res: ServerResponse, heartbeatMs: number): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': newId('req') });
    res.socket?.setNoDelay(true);
    res.flushHeaders();
    this.subscribers.add(res);
    const beat = setInterval(() => res.write(`event: ping\ndata: {"type":"ping"}\n\n`), heartbeatMs);
    beat.unref();
    res.on('close', () => {
      clearInterval(beat);
      this.subscribers.delete(res);
    });
  }

  /** Open stream connections. */
  get connections(): number {
    return this.subscribers.size;
  }

  /** Cuts every open stream mid-flight: the sockets are destroyed, as a network drop would. */
  dropStreams(): number {
    const n = this.subscribers.size;
    for (const res of this.subscribers) res.socket?.destroy();
    this.subscribers.clear();
    return n;
  }

  /** Ends every open stream cleanly (the stand-in is closing). */
  close(): void {
    for (const res of this.subscribers) res.end();
    this.subscribers.clear();
  }
}
