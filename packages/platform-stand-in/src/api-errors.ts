/**
 * Anthropic's error shape (`{"type":"error","error":{"type","message"},"request_id"}`) and the JSON
 * plumbing of the stand-in's HTTP handlers: every failure is an {@link ApiError} carrying its status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newId } from './ids';

export type ApiErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'api_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ApiErrorType,
    message: string,
  ) {
    super(message);
  }
}

export const invalidRequest = (message: string) => new ApiError(400, 'invalid_request_error', message);
export const notFound = (what: string, id: string) => new ApiError(404, 'not_found_error', `${what} ${id} not found`);

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
  res.end(JSON.stringify(body));
}

/** Answers any thrown value in the error shape (a 500 `api_error` when it is not an {@link ApiError}). */
export function sendError(res: ServerResponse, e: unknown): void {
  if (res.headersSent) return void res.end();
  const err = e instanceof ApiError ? e : new ApiError(500, 'api_error', (e as Error)?.message ?? String(e));
  const requestId = newId('req');
  res.writeHead(err.status, { 'content-type': 'application/json', 'request-id': requestId });
  res.end(JSON.stringify({ type: 'error', error: { type: err.type, message: err.message }, request_id: requestId }));
}

/** The request body as a JSON object (an empty body is `{}`); anything else is a 400. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, any>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest('the body is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidRequest('the body must be a JSON object');
  return value as Record<string, any>;
}
