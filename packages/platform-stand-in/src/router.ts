/**
 * A tiny router for the stand-in's two APIs: `METHOD /path/:param` patterns; a handler answers a body
 * (sent as 200 JSON) or `undefined` when it wrote the response itself (the SSE stream).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, sendJson } from './api-errors';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
}

export type Handler = (c: RouteContext) => Promise<unknown> | unknown;

export class Router {
  private readonly routes: { method: string; parts: string[]; handler: Handler }[] = [];

  on(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  /** Runs the handler of `method` + `path` (segments below the API's prefix); a 404 when none matches. */
  async dispatch(req: IncomingMessage, res: ServerResponse, path: string[], query: URLSearchParams): Promise<void> {
    for (const r of this.routes) {
      if (r.method !== req.method || r.parts.length !== path.length) continue;
      if (!r.parts.every((p, i) => p.startsWith(':') || p === path[i])) continue;
      const params: Record<string, string> = {};
      r.parts.forEach((p, i) => p.startsWith(':') && (params[p.slice(1)] = path[i]));
      const body = await r.handler({ req, res, params, query });
      if (body !== undefined) sendJson(res, 200, body);
      return;
    }
    throw new ApiError(404, 'not_found_error', `no route ${req.method} /${path.join('/')}`);
  }
}
