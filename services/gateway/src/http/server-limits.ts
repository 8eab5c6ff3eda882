/**
 * The public HTTP server's limits and its graceful stop (docs/reliability.md "Edge protection"):
 * - slow clients: the headers of a request must arrive within `headersTimeoutMs` and the whole request
 *   within `requestTimeoutMs` (a slowloris, or a connection that never sends anything, gets a 408 and is
 *   closed; Node checks every `CHECK_INTERVAL_MS`);
 * - idle keep-alive connections are closed after `keepAliveTimeoutMs`; at most `maxConnections` sockets
 *   are open at once (more are dropped on accept);
 * - what Node's HTTP parser refuses before express sees it (oversized headers or request line, a
 *   malformed message, a timeout) is answered in the API's error shape `{"detail": …}` instead of Node's
 *   bare status line;
 * - stop(): no new connection is accepted, idle ones are closed, requests in flight finish (their answers
 *   carry `Connection: close`), and what is still open after `graceMs` is closed.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '@agw/shared';
import { EdgeRequest, EdgeResponse } from './governed-edge';

export const CHECK_INTERVAL_MS = 1000;

export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  graceMs: number;
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large: the request line and headers must fit in 16 KB (a long query belongs in a POST body)'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout: the request was not received in time'],
  HPE_HEADERS_TIMEOUT: [408, 'Request timeout: the request headers were not received in time'],
};

function reply(socket: Socket, status: number, detail: string): void {
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * A server with the limits set; `stop()` drains it. Its requests and responses are the edge's classes
 * (node's, with what the governed route uses of express's: http/governed-edge.ts).
 */
export function createLimitedServer(
  handler: (req: EdgeRequest, res: EdgeResponse) => void,
  limits: ServerLimits,
  logger: Logger,
): { server: http.Server<typeof EdgeRequest, typeof EdgeResponse>; stop(): Promise<void> } {
  let stopping = false;
  const options = { connectionsCheckingInterval: CHECK_INTERVAL_MS, requestTimeout: limits.requestTimeoutMs, headersTimeout: limits.headersTimeoutMs, IncomingMessage: EdgeRequest, ServerResponse: EdgeResponse };
  const server = http.createServer<typeof EdgeRequest, typeof EdgeResponse>(options, (req, res) => {
    if (stopping) res.setHeader('connection', 'close');
    handler(req, res);
  });
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    if (!socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    const known = CLIENT_ERRORS[err.code ?? ''];
    const [status, detail] = known ?? [400, `Bad request: the HTTP message is malformed (${String(err.code ?? 'parse error').replace(/^HPE_/, '').toLowerCase()})`];
    reply(socket, status, detail);
  });
  server.on('drop', () => logger.warn({ maxConnections: limits.maxConnections }, 'connection dropped: too many open connections'));
  const stop = () =>
    new Promise<void>((resolve) => {
      stopping = true;
      // no new connections; idle keep-alive ones now, the others as soon as their request is answered
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const hard = setTimeout(() => {
        logger.warn({ graceMs: limits.graceMs }, 'requests still open after the grace period: closing their connections');
        server.closeAllConnections();
      }, limits.graceMs);
      hard.unref();
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(hard);
        resolve();
      });
      server.closeIdleConnections();
    });
  return { server, stop };
}
