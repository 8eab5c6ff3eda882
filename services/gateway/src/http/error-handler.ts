/** The one place where the error taxonomy becomes HTTP: status + `{detail}`. Never a stack trace. */
import type { NextFunction, Request, Response } from 'express';
import { AppError, type ErrorCode, type Logger, STORE_RETRY_AFTER_SECONDS, StoreUnavailableError, type ValidationIssue, isDependencyDown, locateAtEdge, unreachableStore } from '@agw/shared';

export const httpStatus: Record<ErrorCode, number> = {
  invalid_input: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  payload_too_large: 413,
  dependency_unavailable: 502,
  store_unavailable: 503,
  overloaded: 503,
  internal: 500,
};

export function errorHandler(logger: Logger) {
  return (thrown: unknown, req: Request, res: Response, _next: NextFunction): void => {
    // a store of the gateway itself (Postgres, Redis, NATS) that cannot be reached: 503, never a 500
    const store = unreachableStore(thrown);
    const err = store ? new StoreUnavailableError(store, 'gateway', { cause: thrown }) : thrown;
    if (store) logger.warn({ err: thrown, reqId: req.id, path: req.path, store }, 'store unreachable');
    // body-parser failures: malformed JSON and oversized bodies are the client's fault
    const bp = err as { type?: string; status?: number; message?: string };
    if (bp?.type === 'entity.parse.failed') {
      res.status(422).json({ detail: [{ loc: ['body'], msg: `Malformed JSON: ${bp.message ?? 'parse error'}`, type: 'json_invalid' }] });
      return;
    }
    if (bp?.type === 'entity.too.large') {
      res.status(413).json({ detail: 'Request body too large' });
      return;
    }
    if (bp?.type && bp.status && bp.status < 500) {
      res.status(bp.status === 415 ? 415 : 422).json({ detail: [{ loc: ['body'], msg: bp.message ?? 'invalid body', type: bp.type }] });
      return;
    }
    // any other client error of the body parser (http-errors, e.g. a body that does not inflate as its
    // Content-Encoding says: zlib's and brotli's errors passed on as a 400) is the client's, never a 500
    const he = err as { status?: number; expose?: boolean; code?: string };
    if (!(err instanceof AppError) && he?.expose === true && typeof he.status === 'number' && he.status >= 400 && he.status < 500) {
      const encoding = req.headers['content-encoding']?.trim().toLowerCase();
      const inflate = !!encoding && encoding !== 'identity' && typeof he.code === 'string';
      const msg = inflate ? `The body is not valid ${encoding} data (Content-Encoding): ${bp.message ?? 'decompression failed'}` : (bp.message ?? 'invalid request');
      res.status(he.status === 400 ? 422 : he.status).json({ detail: [{ loc: ['body'], msg, type: inflate ? 'encoding_invalid' : 'body_invalid' }] });
      return;
    }
    if (err instanceof AppError) {
      const status = httpStatus[err.code];
      // expected dependency failures are logged once where they are decided; only internal errors carry a stack
      if (status === 500) logger.error({ err, reqId: req.id, path: req.path }, 'request failed');
      else if (status >= 500) logger.debug({ reqId: req.id, path: req.path, detail: err.message }, 'dependency unavailable');
      // a route group that can sign a client in names where (the MCP endpoints: OAuth resource metadata)
      if (status === 401 && typeof res.locals.authChallenge === 'string') res.setHeader('WWW-Authenticate', res.locals.authChallenge);
      if (err.code === 'rate_limited' || err.code === 'overloaded') res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds ?? 1))));
      // a store (503) or a peer service (502) that cannot answer: say what, and when to try again
      if (isDependencyDown(err)) {
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds ?? STORE_RETRY_AFTER_SECONDS))));
        if (err.code === 'store_unavailable') {
          res.status(503).json({ detail: `Service unavailable: ${err.message}; retry later` });
          return;
        }
      }
      if (err.code === 'rate_limited' && typeof err.detail === 'object' && err.detail && 'error' in err.detail) {
        res.status(status).json(err.detail);
        return;
      }
      // a field error raised by a service names the field; here it is located in the request
      const detail = err.code === 'invalid_input' && Array.isArray(err.detail) ? (err.detail as ValidationIssue[]).map(locateAtEdge) : err.detail;
      res.status(status).json({ detail: status === 500 ? 'Internal server error' : detail });
      return;
    }
    logger.error({ err, reqId: req.id, path: req.path }, 'unhandled error');
    res.status(500).json({ detail: 'Internal server error' });
  };
}
