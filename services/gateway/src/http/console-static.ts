/**
 * The operator console (packages/console, a static single-page app) served at / outside /api, same
 * origin as the API:
 * - hashed assets (/assets/*-HASH.*) are immutable for a year; index.html is `no-cache` (revalidated, so a
 *   new build is picked up at once);
 * - every answer carries a Content-Security-Policy that allows this origin only (no external script,
 *   style, font, image or connection; no framing) and the usual hardening headers. index.html gets a fresh
 *   nonce per response (in the header and in `<meta name="csp-nonce">`): the Rego editor (CodeMirror)
 *   adds its stylesheet as a <style> element carrying that nonce; no other inline style or script runs;
 * - any other GET/HEAD path that is not a file (e.g. /audit, /public/acme) answers index.html, so the
 *   console's client-side routes survive a reload (SPA fallback). Missing files with an extension stay 404.
 * /api/* is mounted before this and never reaches it. When the console is not built, nothing is served
 * here and the app's JSON 404 answers as before.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Response, Router } from 'express';

/** The policy of every console answer; index.html adds its nonce to style-src (consoleCsp(nonce)). */
export const consoleCsp = (nonce?: string) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    nonce ? `style-src 'self' 'nonce-${nonce}'` : "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
export const CONSOLE_CSP = consoleCsp();

/** packages/console/dist, from services/gateway/{src,dist}/http. */
export const DEFAULT_CONSOLE_DIR = path.resolve(__dirname, '../../../../packages/console/dist');

function harden(res: Response, nonce?: string): void {
  res.setHeader('Content-Security-Policy', consoleCsp(nonce));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

export function consoleStatic(dir: string = DEFAULT_CONSOLE_DIR): Router {
  const r = Router();
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) return r;
  const html = readFileSync(index, 'utf8');
  const sendIndex = (res: Response) => {
    const nonce = randomBytes(16).toString('base64');
    harden(res, nonce);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(html.replaceAll('__CSP_NONCE__', nonce));
  };
  r.get('/index.html', (_req, res) => sendIndex(res));
  r.use(
    express.static(dir, {
      index: false,
      redirect: false,
      setHeaders(res, file) {
        harden(res);
        const immutable = file.startsWith(path.join(dir, 'assets') + path.sep);
        res.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  r.get(/^\/(?!api(?:\/|$)).*/, (req, res, next) => {
    // a missing file (a path whose last segment has an extension) is a 404, not the app
    if (path.extname(req.path)) return next();
    sendIndex(res);
  });
  return r;
}
