import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express, { Router } from 'express';
import { CONSOLE_CSP, consoleCsp, consoleStatic } from './console-static';

/** The console mounted as app.ts mounts it: /api first (its own JSON 404), then the console, then the JSON 404. */
async function serve(dir: string) {
  const app = express();
  const api = Router();
  api.get('/health', (_req, res) => void res.json({ status: 'ok' }));
  api.use((_req, res) => void res.status(404).json({ detail: 'Not found' }));
  app.use('/api', api);
  app.use(consoleStatic(dir));
  app.use((_req, res) => void res.status(404).json({ detail: 'Not found: every endpoint is under /api/' }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise((r) => server.close(r)) };
}

describe('console static files', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'console-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><meta name="csp-nonce" content="__CSP_NONCE__"><title>console</title>');
  writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (s = await serve(dir)));
  afterAll(() => s.close());

  it('serves index.html at / with no-cache and a CSP without external origins', async () => {
    const r = await fetch(`${s.base}/`);
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain('<title>console</title>');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    // a fresh style nonce per answer, the same in the header and in the page
    const nonce = /content="([^"]+)"/.exec(html)![1];
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(r.headers.get('content-security-policy')).toBe(consoleCsp(nonce));
    const again = await fetch(`${s.base}/index.html`);
    expect(await again.text()).not.toContain(nonce);
    expect(again.headers.get('content-security-policy')).toMatch(/style-src 'self' 'nonce-[^']+'/);
    for (const csp of [CONSOLE_CSP, consoleCsp(nonce)]) expect(csp).not.toMatch(/https?:|\*|unsafe-inline|unsafe-eval/);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves hashed assets as immutable for a year', async () => {
    const r = await fetch(`${s.base}/assets/index-AbC123.js`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/javascript/);
    expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(r.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
  });

  it('answers index.html for client-side routes (SPA fallback), 404 for a missing file', async () => {
    for (const p of ['/approvals', '/audit?x=1', '/public/acme', '/transparency/abc']) {
      const r = await fetch(`${s.base}${p}`);
      expect([p, r.status, r.headers.get('cache-control')]).toEqual([p, 200, 'no-cache']);
      expect(await r.text()).toContain('<title>console</title>');
    }
    const missing = await fetch(`${s.base}/assets/gone-123.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Not found: every endpoint is under /api/' });
  });

  it('leaves /api alone and other methods to the JSON 404', async () => {
    expect(await (await fetch(`${s.base}/api/health`)).json()).toEqual({ status: 'ok' });
    const r = await fetch(`${s.base}/api/nope`);
    expect([r.status, await r.json()]).toEqual([404, { detail: 'Not found' }]);
    const post = await fetch(`${s.base}/approvals`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(post.headers.get('content-type')).toMatch(/json/);
  });

  it('serves nothing when the console is not built', async () => {
    const empty = await serve(mkdtempSync(path.join(tmpdir(), 'no-console-')));
    try {
      const r = await fetch(`${empty.base}/`);
      expect([r.status, await r.json()]).toEqual([404, { detail: 'Not found: every endpoint is under /api/' }]);
    } finally {
      await empty.close();
    }
  });
});
