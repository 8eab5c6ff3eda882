/**
 * The end of the /api router: a path that exists under another method is a 405 with an `Allow` header
 * (found by asking the router's own route table, so it holds for every route without a list), anything
 * else a 404.
 */
import type { Request, Response, Router } from 'express';

interface Layer {
  match(path: string): boolean;
  route?: { methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** The methods the routes of `stack` (and of the routers mounted in it) accept for `path`. */
export function allowedMethods(stack: Layer[], path: string, out = new Set<string>()): Set<string> {
  for (const layer of stack) {
    if (!layer.match(path)) continue;
    if (layer.route) {
      for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') out.add(m.toUpperCase());
    } else if (layer.handle?.stack) allowedMethods(layer.handle.stack, path, out);
  }
  if (out.has('GET')) out.add('HEAD');
  return out;
}

export function notFoundOrMethodNotAllowed(router: Router) {
  return (req: Request, res: Response): void => {
    const allowed = allowedMethods((router as unknown as { stack: Layer[] }).stack, req.path);
    allowed.delete(req.method);
    if (allowed.size) {
      res.status(405).set('Allow', [...allowed].sort().join(', ')).json({ detail: `Method Not Allowed: ${req.method} ${req.baseUrl}${req.path} accepts ${[...allowed].sort().join(', ')}` });
      return;
    }
    res.status(404).json({ detail: 'Not found' });
  };
}
