/**
 * What an upstream sends during a federated `tools/call` (its `notifications/progress` and
 * `notifications/message`), relayed to the MCP client on the call's own response stream (docs/mcp.md,
 * "Inside a call"). The vault streams them (ExecuteStream, bounded and masked there); here they become the
 * client's notifications:
 * - progress carries the client's own `progressToken` (the upstream's is never seen here);
 * - a log message is relayed at the level the client asked for: a 2026-07-28 request's
 *   `_meta["io.modelcontextprotocol/logLevel"]`; an earlier revision's `logging/setLevel` is not kept
 *   by a stateless server, so there every level is relayed.
 *
 * When: a request that asks for progress (`_meta.progressToken`), or, in revision 2026-07-28, for log
 * messages (`_meta` logLevel). Any other call is answered as before (one JSON answer, the unary Execute).
 * A 2026-07-28 answer turns into an SSE stream only when the first notification is sent (`LazySseAnswer`),
 * so a call whose upstream sends nothing is answered with JSON.
 */
import type { Response } from 'express';
import { isMcpLogLevel } from '@agw/shared';
import type { UpstreamNotification, UpstreamNotifications } from '../pipeline/hooks';

export const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel';

/** What a tools/call request asks to be relayed: progress with its token, log messages from a level. */
export interface RelayWish {
  progressToken?: string | number;
  logLevel?: string;
}

/** A JSON-RPC notification to the client. */
export interface ClientNotification {
  method: 'notifications/progress' | 'notifications/message';
  params: Record<string, unknown>;
}

/**
 * What a request asks to be relayed, or undefined (nothing: the call runs as it did). `modern`: revision
 * 2026-07-28, where log messages are asked for per request; earlier revisions relay them (every level)
 * with a call's progress only.
 */
export function relayWishOf(method: unknown, params: unknown, modern: boolean): RelayWish | undefined {
  if (method !== 'tools/call' || !params || typeof params !== 'object') return undefined;
  const meta = (params as { _meta?: Record<string, unknown> })._meta;
  if (!meta || typeof meta !== 'object') return undefined;
  const token = meta.progressToken;
  const progressToken = typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token)) ? token : undefined;
  const asked = meta[LOG_LEVEL_META];
  const logLevel = modern ? (isMcpLogLevel(asked) ? asked : undefined) : progressToken !== undefined ? 'debug' : undefined;
  if (progressToken === undefined && logLevel === undefined) return undefined;
  return { ...(progressToken !== undefined ? { progressToken } : {}), ...(logLevel ? { logLevel } : {}) };
}

/** The upstream's notifications of a call, as the client's own (`send` writes one on the request's stream). */
export function notificationsFor(wish: RelayWish, send: (n: ClientNotification) => void): UpstreamNotifications {
  return {
    progress: wish.progressToken !== undefined,
    ...(wish.logLevel ? { logLevel: wish.logLevel } : {}),
    send: (n: UpstreamNotification) => {
      if (n.kind === 'progress') {
        if (wish.progressToken === undefined) return;
        send({ method: 'notifications/progress', params: { progressToken: wish.progressToken, progress: n.progress, ...(n.total !== undefined ? { total: n.total } : {}), ...(n.message !== undefined ? { message: n.message } : {}) } });
      } else {
        send({ method: 'notifications/message', params: { level: n.level, ...(n.logger !== undefined ? { logger: n.logger } : {}), data: n.data } });
      }
    },
  };
}

/**
 * A 2026-07-28 answer that becomes an SSE stream (`text/event-stream`, one `message` event per JSON-RPC
 * message, the answer last) when the first notification is sent, and stays one JSON answer otherwise.
 */
export class LazySseAnswer {
  private streaming = false;

  constructor(private readonly res: Response) {}

  notify(n: ClientNotification): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (!this.streaming) {
      this.streaming = true;
      this.res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      this.res.flushHeaders();
    }
    this.event({ jsonrpc: '2.0', ...n });
  }

  /** The answer: the last event of a stream, or the JSON answer (a bodyless one for a notification). */
  finish(status: number, body?: Record<string, unknown>): void {
    if (!this.streaming) return void (body ? this.res.status(status).json(body) : this.res.status(status).end());
    if (body) this.event(body);
    this.res.end();
  }

  private event(message: Record<string, unknown>): void {
    if (!this.res.writableEnded && !this.res.destroyed) this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}
