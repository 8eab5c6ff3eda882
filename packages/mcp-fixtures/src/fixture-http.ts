/**
 * The fixtures' HTTP server: it hands each request to a route (a throw answers 500, or drops the connection
 * once the answer has started), answers 503 once closing, and closes with its open sockets (hanging calls,
 * SSE streams) so a test never waits on a fixture.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { json } from './http-body';

export interface FixtureHttp {
  /** http://host:port (an IPv6 host in brackets) */
  url: string;
  /** From now on every new request is answered 503; false when it was closing already. */
  beginClose(): boolean;
  /** Destroys the open sockets and closes the server. */
  close(): Promise<void>;
}

/** Listen at `at` (no port or 0: a free one); `closingError` is the error of the 503 answered while closing. */
export async function serveFixture(
  at: { host?: string; port?: number },
  closingError: string,
  route: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<unknown>,
): Promise<FixtureHttp> {
  let closing = false;
  const server = http.createServer((req, res) => {
    if (closing) return json(res.setHeader('connection', 'close'), 503, { error: closingError });
    route(req, res, new URL(req.url ?? '/', 'http://fixture')).catch((e: Error) => {
      if (!res.headersSent) json(res, 500, { error: e.message });
      else res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(at.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    beginClose: () => {
      if (closing) return false;
      closing = true;
      return true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
