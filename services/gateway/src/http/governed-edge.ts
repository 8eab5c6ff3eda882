/**
 * The governed tool call served outside express (issue 26; docs/history/performance-2026.md, "The governed route
 * outside express"). Most of what express costs per request is its own request and response objects
 * (`Object.setPrototypeOf` of both, per request) and its router; the governed call is the one request a
 * gateway serves thousands of times a second. So the gateway's HTTP server makes its requests and
 * responses of the two classes below, node's own with the small part of express's API that the governed
 * route's steps use, and `governedEdge` runs `POST /api/mcp/tools/call` through **the same steps** express
 * runs for it (app.ts builds the one list: admission, request id, metrics, body, input rules,
 * authentication, rate limit, key scope, the route's handler; errors to the one error handler). Every other
 * request, and every other spelling of this one (a query string, a trailing slash, another case), goes to
 * express, which sets its own prototypes on these objects as on any node request and answers as before.
 *
 * What the steps may use of a request: `method`, `headers`, `header(name)`, `path` (relative to /api),
 * `query` (always empty here), `body`, `id`, `auth`, `route`, and node's stream API; of a response: node's
 * API, `locals`, `status()`, `set()` and `json()`. `governed-edge.test.ts` runs steps using all of it on
 * both paths and compares the answers.
 */
import http from 'node:http';
import { traceHooks } from '@agw/shared';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthContext } from './request-context';

/** The governed call's path under /api: the express route's (routes/tool-calls.routes.ts) and the edge's. */
export const TOOL_CALL_PATH = '/mcp/tools/call';
/** The one URL served here; everything else is express's. */
export const GOVERNED_URL = `/api${TOOL_CALL_PATH}`;
/** express's route label and relative path of the governed call (it is mounted under /api) */
const ROUTE = Object.freeze({ path: TOOL_CALL_PATH });
const NO_QUERY: Readonly<Record<string, never>> = Object.freeze(Object.create(null) as Record<string, never>);

/** The gateway server's request: node's, with what the governed route's steps read of express's. */
export class EdgeRequest extends http.IncomingMessage {
  declare id: string;
  declare auth?: AuthContext;
  declare body?: unknown;
  declare path: string;
  declare route?: { path: string };

  /** the governed URL has no query string (a URL with one is express's) */
  get query(): Readonly<Record<string, never>> {
    return NO_QUERY;
  }

  /** a request header by any case of its name, as express's `req.header` (Referer and Referrer alike) */
  header(name: string): string | undefined {
    const lc = name.toLowerCase();
    const v = lc === 'referer' || lc === 'referrer' ? (this.headers.referrer ?? this.headers.referer) : this.headers[lc];
    return Array.isArray(v) ? v.join(', ') : v;
  }
}

/** The gateway server's response: node's, with what the governed route's steps use of express's. */
export class EdgeResponse extends http.ServerResponse<EdgeRequest> {
  declare locals: Record<string, unknown>;

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  set(field: string, value: string | number): this {
    this.setHeader(field, String(value));
    return this;
  }

  /** express's `res.json` as the gateway runs express (no ETag, no JSON spaces or replacer, no escaping) */
  json(body: unknown): this {
    const text = JSON.stringify(body);
    if (!this.hasHeader('content-type')) this.setHeader('content-type', 'application/json; charset=utf-8');
    this.setHeader('content-length', Buffer.byteLength(text));
    this.end(text);
    return this;
  }
}

/** The request listener of the gateway's server: the governed call through `steps`, the rest to `app`. */
export function governedEdge(app: Express, steps: RequestHandler[], onError: ErrorRequestHandler): (req: EdgeRequest, res: EdgeResponse) => void {
  return (req, res) => {
    if (req.url !== GOVERNED_URL || req.method !== 'POST' || !(req instanceof EdgeRequest) || !(res instanceof EdgeResponse)) {
      app(req, res);
      return;
    }
    req.path = ROUTE.path;
    req.route = ROUTE;
    // the server span is `POST /api/mcp/tools/call`, as express's instrumentation names its routes' spans
    traceHooks.current?.httpRoute(GOVERNED_URL);
    res.locals = Object.create(null) as Record<string, unknown>;
    // the steps are express middlewares; these objects carry the part of express's API they use (above)
    runSteps(steps, onError, req as unknown as Request, res as unknown as Response);
  };
}

/**
 * Runs `steps` in order as express's router would: each calls `next()` to go on; a step that throws, rejects
 * or calls `next(err)` ends the chain in `onError`. An error after the answer started closes the connection
 * (what express's final handler does).
 */
function runSteps(steps: RequestHandler[], onError: ErrorRequestHandler, req: Request, res: Response): void {
  let i = 0;
  let failed = false;
  const fail = (err: unknown) => {
    if (failed) return;
    failed = true;
    if (res.headersSent) return void req.socket.destroy();
    try {
      onError(err, req, res, () => req.socket.destroy());
    } catch {
      req.socket.destroy();
    }
  };
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined && err !== null) return fail(err);
    const step = steps[i++];
    if (!step || failed) return;
    try {
      const r = step(req, res, next) as unknown;
      if (r instanceof Promise) r.then(undefined, fail);
    } catch (e) {
      fail(e);
    }
  };
  next();
}
