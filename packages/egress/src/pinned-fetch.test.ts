import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressPolicy } from './address-policy';
import { createPinnedFetch } from './pinned-fetch';

let server: http.Server;
let port: number;
const seen: Array<{ host?: string; method?: string; body: string; type?: string }> = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ host: req.headers.host, method: req.method, body, type: req.headers['content-type'] });
      if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      if (req.url === '/big') return void res.end('x'.repeat(10_000));
      if (req.url === '/hang') return;
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const t = setInterval(() => res.write('data: {}\n\n'), 5);
        return void res.on('close', () => clearInterval(t));
      }
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' }).end(JSON.stringify({ host: req.headers.host, method: req.method, body }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

const loopback = new AddressPolicy({ allowCidrs: ['127.0.0.0/8'], lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
const make = (over: Partial<Parameters<typeof createPinnedFetch>[0]> = {}) => createPinnedFetch({ policy: loopback, maxResponseBytes: 1000, connectTimeoutMs: 1000, headersTimeoutMs: 1000, ...over });

describe('pinned fetch', () => {
  it('connects to the checked address, keeps the URL host, sends the body and gives a WHATWG Response', async () => {
    const f = make();
    const r = await f(`http://tool.example:${port}/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBe('s-1');
    expect(await r.json()).toEqual({ host: `tool.example:${port}`, method: 'POST', body: '{"a":1}' });
    const form = await f(`http://tool.example:${port}/form`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }) });
    expect(((await form.json()) as { body: string }).body).toBe('grant_type=client_credentials');
    expect(seen.at(-1)?.type).toMatch(/^application\/x-www-form-urlencoded/);
    f.close();
  });

  it('refuses an address the policy refuses, before any connection', async () => {
    const f = createPinnedFetch({ policy: new AddressPolicy(), maxResponseBytes: 1000, connectTimeoutMs: 1000, headersTimeoutMs: 1000 });
    const before = seen.length;
    await expect(f(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ name: 'EgressRefusedError' });
    expect(seen.length).toBe(before);
  });

  it('never follows a redirect', async () => {
    const f = make();
    const r = await f(`http://tool.example:${port}/redirect`);
    expect([r.status, r.headers.get('location')]).toEqual([302, 'http://169.254.169.254/']);
    f.close();
  });

  it('caps the body: the stream fails with too_large; the cap may depend on the method', async () => {
    const f = make();
    const r = await f(`http://tool.example:${port}/big`);
    await expect(r.text()).rejects.toMatchObject({ kind: 'too_large' });
    const g = make({ maxResponseBytes: (m) => (m === 'GET' ? 20_000 : 10) });
    expect((await (await g(`http://tool.example:${port}/big`)).text()).length).toBe(10_000);
    f.close();
    g.close();
  });

  it('bounds the wait for headers, and an abort ends the request and a streaming body', async () => {
    const f = make({ headersTimeoutMs: 200 });
    const t0 = Date.now();
    await expect(f(`http://tool.example:${port}/hang`)).rejects.toMatchObject({ kind: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(1500);
    const ac = new AbortController();
    const pending = f(`http://tool.example:${port}/hang`, { signal: ac.signal });
    ac.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    const ac2 = new AbortController();
    const g = make({ maxResponseBytes: 1_000_000 });
    const r = await g(`http://tool.example:${port}/stream`, { signal: ac2.signal });
    const reader = r.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    ac2.abort();
    await expect((async () => { for (;;) if ((await reader.read()).done) return 'done'; })()).rejects.toMatchObject({ name: 'AbortError' });
    f.close();
    g.close();
  });

  it('an endless stream fails once past the cap', async () => {
    const f = make({ maxResponseBytes: 500 });
    const r = await f(`http://tool.example:${port}/stream`);
    await expect(r.text()).rejects.toMatchObject({ kind: 'too_large' });
    f.close();
  });
});
