import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressRequestError, pinnedRequest } from './pinned-request';

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    if (req.url === '/big') return void res.end('x'.repeat(10_000));
    if (req.url === '/hang') return; // never answers
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      return void setTimeout(() => res.socket?.destroy(), 20);
    }
    res.end(JSON.stringify({ host: req.headers.host, method: req.method }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

const req = (path: string, over: Partial<Parameters<typeof pinnedRequest>[0]> = {}) =>
  pinnedRequest({ url: new URL(`http://tool.example:${port}${path}`), target: { address: '127.0.0.1', family: 4 }, method: 'GET', headers: {}, timeoutMs: 2000, maxResponseBytes: 1000, ...over });

describe('pinned request', () => {
  it('connects to the checked address and keeps the URL host in the Host header', async () => {
    const r = await req('/');
    expect(r.statusCode).toBe(200);
    expect(JSON.parse(r.body.toString())).toEqual({ host: `tool.example:${port}`, method: 'GET' });
  });

  it('never follows a redirect', async () => {
    const r = await req('/redirect');
    expect([r.statusCode, r.headers.location]).toEqual([302, 'http://169.254.169.254/']);
  });

  it('caps the response: fails, or truncates when asked', async () => {
    await expect(req('/big')).rejects.toMatchObject({ kind: 'too_large' });
    const r = await req('/big', { onTooLarge: 'truncate' });
    expect(r.truncated).toBe(true);
    expect(r.statusCode).toBe(200);
  });

  it('bounds an answer that never comes, and fails a response cut before its end', async () => {
    const t0 = Date.now();
    await expect(req('/hang', { timeoutMs: 300 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(1500);
    await expect(req('/cut')).rejects.toBeInstanceOf(EgressRequestError);
    expect((await req('/cut', { requireCompleteBody: false })).statusCode).toBe(200);
  });
});
