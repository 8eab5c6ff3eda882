/**
 * Wrong methods and unknown paths under /api, answered from the router's own route table (so the rule
 * holds for every route without a list to keep in step):
 * - a path that exists under other methods is `405 {"detail": "Method Not Allowed"}` with an `Allow`
 *   header listing them;
 * - anything else is `404 {"detail": "Not found"}`.
 * `notFoundOrMethodNotAllowed` ends the router (after authentication, so an authenticated caller learns
 * nothing new). `methodNotAllowedWithoutCredentials` runs before authentication for requests that carry
 * no credentials at all, so a wrong method on a public route (`GET /api/auth/signup`) is a 405 rather than
 * a 401; requests with credentials skip it and pay nothing for the route walk.
 */
import type { NextFunction, Request, Response, Router } from 'express';

interface Layer {
  match(path: string): boolean;
  route?: { methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Stands for a route that takes every method (`router.all`). */
const ANY = '*';

/** The methods the routes of `stack` (and of the routers mounted in it) accept for `path`. */
export function allowedMethods(stack: Layer[], path: string, out = new Set<string>()): Set<string> {
  for (const layer of stack) {
    if (!layer.match(path)) continue;
    if (layer.route) {
      for (const [m, on] of Object.entries(layer.route.methods)) if (on) out.add(m === '_all' ? ANY : m.toUpperCase());
    } else if (layer.handle?.stack) allowedMethods(layer.handle.stack, path, out);
  }
  if (out.has('GET')) out.add('HEAD');
  return out;
}

const stackOf = (router: Router) => (router as unknown as { stack: Layer[] }).stack;

/** The methods other than `req.method` that `path` accepts, or undefined when the method is fine or the path unknown. */
function otherMethods(router: Router, req: Request): string[] | undefined {
  const allowed = allowedMethods(stackOf(router), req.path);
  if (allowed.size === 0 || allowed.has(ANY) || allowed.has(req.method)) return undefined;
  return [...allowed].sort();
}

function answer405(res: Response, allow: string[]): void {
  res.status(405).set('Allow', allow.join(', ')).json({ detail: 'Method Not Allowed' });
}

export function notFoundOrMethodNotAllowed(router: Router) {
  return (req: Request, res: Response): void => {
    const allow = otherMethods(router, req);
    if (allow) return answer405(res, allow);
    res.status(404).json({ detail: 'Not found' });
  };
}

/** Before authentication: a request without any credentials and with a wrong method on a known path is a 405. */
export function methodNotAllowedWithoutCredentials(router: Router) {
  return (req: Request, res: Response, next: NextFunction): void => {
    // OPTIONS is answered by the router itself (its Allow list)
    if (req.method === 'OPTIONS' || req.headers['x-api-key'] !== undefined || req.headers.authorization !== undefined) return next();
    const allow = otherMethods(router, req);
    if (allow) return answer405(res, allow);
    next();
  };
}
