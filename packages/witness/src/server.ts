/**
 * The witness over HTTP (C2SP tlog-witness): `POST <prefix>/add-checkpoint` and
 * `GET <prefix>/<origin hash>/checkpoint`, plus `GET /` with the witness's name and verifier key. Bodies are
 * limited to 64 KB (a checkpoint, 63 proof lines and a few signatures fit in 8).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Witness } from './witness';

const MAX_BODY = 64 * 1024;

export interface RunningWitness {
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function serveWitness(witness: Witness, o: { host?: string; port?: number; prefix?: string } = {}): Promise<RunningWitness> {
  const prefix = (o.prefix ?? '').replace(/\/$/, '');
  const server = http.createServer((req, res) => {
    const answer = (status: number, body: string, contentType = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const url = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (url === '/' || url === `${prefix}/`)) return answer(200, `${witness.vkey}\n`);
    const m = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([0-9a-f]{64})/checkpoint$`).exec(url);
    if (req.method === 'GET' && m) {
      void witness.latest(m[1]).then((a) => answer(a.status, a.body, a.contentType));
      return;
    }
    if (url !== `${prefix}/add-checkpoint`) return answer(404, 'not found\n');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return answer(405, 'add-checkpoint is a POST\n');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        answer(413, 'request body over 64 KB\n');
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return;
      const vkey = req.headers['x-log-verifier-key'];
      witness
        .addCheckpoint(Buffer.concat(chunks).toString('utf8'), typeof vkey === 'string' ? vkey : undefined)
        .then((a) => answer(a.status, a.body, a.contentType))
        .catch((e: unknown) => answer(500, `${(e as Error).message}\n`));
    });
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, o.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${o.host ?? '127.0.0.1'}:${port}${prefix}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
