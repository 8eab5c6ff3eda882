/**
 * Every service's operations port: `/healthz` (the process is alive), `/readyz` (its dependencies answer;
 * 503 with the failing checks otherwise) and `/metrics` (Prometheus text).
 */
import http from 'node:http';
import type { Registry } from 'prom-client';

export type ReadinessCheck = () => Promise<void>;

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/** Run every check; returns {name: 'ok' | error message}. */
export async function runChecks(checks: Record<string, ReadinessCheck>, timeoutMs = 2000): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await Promise.race([check(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), timeoutMs).unref())]);
        return [name, 'ok'] as const;
      } catch (e) {
        return [name, e instanceof Error ? e.message : String(e)] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}

export async function startOpsServer(opts: {
  host: string;
  port: number;
  registry: Registry;
  checks: Record<string, ReadinessCheck>;
}): Promise<OpsServer> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'application/json') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (url === '/healthz') return send(200, JSON.stringify({ status: 'ok' }));
    if (url === '/readyz') {
      void runChecks(opts.checks).then((checks) => {
        const ok = Object.values(checks).every((v) => v === 'ok');
        send(ok ? 200 : 503, JSON.stringify({ status: ok ? 'ready' : 'not_ready', checks }));
      });
      return;
    }
    if (url === '/metrics') {
      void opts.registry.metrics().then((m) => send(200, m, opts.registry.contentType));
      return;
    }
    send(404, JSON.stringify({ detail: 'Not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : opts.port,
    // idle keep-alive connections (probes, scrapers) would otherwise hold the close until they time out
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
