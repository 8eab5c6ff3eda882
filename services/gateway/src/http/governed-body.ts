/**
 * The governed tool call's JSON body, read without body-parser (issue 26: the gateway's own share of a
 * governed call). The common request (Content-Type `application/json`, optionally `; charset=utf-8`, a
 * Content-Length within the limit, no Content-Encoding) is read and parsed here; anything else goes to
 * `fallback`, the `/api` router's express.json, so every unusual request (compressed, chunked, another
 * media type or charset, too large) gets exactly the answer it always got. The results are body-parser's
 * own: an empty body is `{}`, malformed JSON the `entity.parse.failed` error the error handler answers with
 * a 422, any JSON value accepted (`strict: false`).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** the limit of express.json in app.ts (1 MB); larger bodies take the fallback, which answers 413 */
export const GOVERNED_BODY_LIMIT = 1024 * 1024;

const PLAIN_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** body-parser's error shape (http-errors), so the one error handler answers as before */
function bodyError(status: number, message: string, type: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: true, type });
}

export function governedJsonBody(fallback: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const type = req.headers['content-type'];
    const length = Number(req.headers['content-length']);
    const encoding = req.headers['content-encoding'];
    if (!type || !PLAIN_JSON.test(type) || !Number.isInteger(length) || length > GOVERNED_BODY_LIMIT || (encoding && encoding.toLowerCase() !== 'identity')) {
      fallback(req, res, next);
      return;
    }
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      next(err);
    };
    const onData = (c: Buffer) => chunks.push(c);
    const onEnd = () => {
      let text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark, as body-parser's decoder drops it
      if (text.length === 0) {
        req.body = {};
        finish();
        return;
      }
      try {
        req.body = JSON.parse(text);
      } catch (e) {
        finish(bodyError(400, (e as Error).message, 'entity.parse.failed'));
        return;
      }
      finish();
    };
    const onError = (e: Error) => finish(bodyError(400, e.message, 'request.aborted'));
    const onAborted = () => finish(bodyError(400, 'request aborted', 'request.aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  };
}
