/**
 * Test support: a real HTTPS webhook receiver on 127.0.0.1 with a self-signed certificate made for
 * this run (@agw/shared `selfSignedCert`). Each request is recorded with its arrival time, headers and raw body;
 * `respond(n)` chooses the status of the n-th request (1-based).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { type SelfSignedCert, selfSignedCert } from '@agw/shared';

/** The receiver's certificate for localhost, hook.test, 127.0.0.1 and ::1 (self-signed, so it is its own CA). */
export function receiverCert(names: string[] = ['DNS:localhost', 'DNS:hook.test', 'IP:127.0.0.1', 'IP:::1']): SelfSignedCert {
  return selfSignedCert({ commonName: 'agw-webhook-test-receiver', altNames: names });
}

export interface ReceivedRequest {
  /** performance.now() at arrival */
  at: number;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  json: any;
  /** status this receiver answered */
  answered: number;
}

export interface Receiver {
  port: number;
  url: (p?: string) => string;
  requests: ReceivedRequest[];
  /** requests whose JSON body has data.action_id === id */
  forAction(id: string): ReceivedRequest[];
  /** resolves when `n` requests (matching `filter`) have arrived */
  waitFor(n: number, timeoutMs?: number, filter?: (r: ReceivedRequest) => boolean): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(
  cert: SelfSignedCert,
  respond: (n: number, r: Omit<ReceivedRequest, 'answered'>) => number | 'hang' = () => 200,
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const server = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    const at = performance.now();
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let json: any;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = undefined;
      }
      const seen = { at, path: req.url ?? '/', headers: req.headers, rawBody, json };
      const status = respond(requests.length + 1, seen);
      requests.push({ ...seen, answered: status === 'hang' ? 0 : status });
      for (const w of waiters) w();
      if (status === 'hang') return;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (p = '/hook') => `https://127.0.0.1:${port}${p}`,
    requests,
    forAction: (id) => requests.filter((r) => r.json?.data?.action_id === id),
    waitFor: (n, timeoutMs = 30_000, filter = () => true) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const matching = requests.filter(filter);
          if (matching.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(matching);
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${requests.filter(filter).length} of ${n} requests in ${timeoutMs} ms`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
