/**
 * The one error taxonomy of the fleet. Domain code throws these; the gateway maps them to HTTP once
 * (`services/gateway/src/http/error-handler.ts`), every gRPC server maps them to gRPC status once
 * (`grpc.ts`), and gRPC clients turn a status back into the same class, so a NotFoundError thrown in the
 * audit service is a 404 at the edge.
 */

export type ErrorCode =
  | 'invalid_input'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'payload_too_large'
  | 'dependency_unavailable'
  | 'store_unavailable'
  | 'overloaded'
  | 'internal';

/** One item of a validation error, as the spec's 422 body lists them. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  /** when to try again, for a rate_limited error (the HTTP Retry-After header) */
  retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** What the client sees as `detail`; defaults to the message. */
    readonly detail: unknown = message,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** 422: the request does not match its schema; detail is a list of {loc, msg, type}. */
export class InputError extends AppError {
  constructor(readonly issues: ValidationIssue[]) {
    super('invalid_input', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), issues);
  }
  static at(loc: (string | number)[], msg: string, type = 'value_error'): InputError {
    return new InputError([{ loc, msg, type }]);
  }

  /**
   * A field error as a service raises it: named by the field (or path inside the request) only. Where the
   * field sits in the HTTP request is the edge's business: the gateway puts a named field under `body`
   * (`locateAtEdge`).
   */
  static field(field: string | (string | number)[], msg: string, type = 'value_error'): InputError {
    return new InputError([{ loc: Array.isArray(field) ? field : [field], msg, type }]);
  }
}

/** `value` when it is set, else an InputError naming `field` as missing (proto3 sends an unset string as ''). */
export function requiredField(value: string, field: string): string {
  if (!value) throw InputError.at([field], `${field} is required`, 'missing');
  return value;
}

export class AuthenticationError extends AppError {
  constructor(message = 'Invalid API key') {
    super('unauthenticated', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string, detail: unknown = message) {
    super('forbidden', message, detail);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super('not_found', message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, detail: unknown = message) {
    super('conflict', message, detail);
  }
}

/** 429; `retryAfterSeconds` becomes the Retry-After header (default 1 s). */
export class RateLimitError extends AppError {
  constructor(message: string, detail: unknown = message, retryAfterSeconds = 1) {
    super('rate_limited', message, detail);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A dependency (policy engine, HSM, store) could not be reached; 502 at the edge. */
export class DependencyUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('dependency_unavailable', message, message, options);
  }
}

/**
 * 503: more work than can be finished in time, told apart from a dependency that cannot be reached (502 /
 * the failure modes): the gateway sheds a governed call before doing any work when its in-flight limits are
 * reached, and a peer that is up but did not answer within the call's deadline is overloaded, not gone.
 * Nothing was decided; the client retries after `retryAfterSeconds` (the Retry-After header).
 */
export class OverloadedError extends AppError {
  constructor(message: string, retryAfterSeconds = OVERLOAD_RETRY_AFTER_SECONDS, options?: { cause?: unknown }) {
    super('overloaded', message, message, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** What a client is told to wait after an overload 503: the gateway sheds in bursts shorter than this. */
export const OVERLOAD_RETRY_AFTER_SECONDS = 1;

/** A peer that is connected but did not answer within the call's deadline (gRPC clients, grpc.ts). */
export function overloadedPeer(peer: string, cause?: unknown): OverloadedError {
  return new OverloadedError(`${peer} is overloaded: connected, but no answer within the call's deadline`, OVERLOAD_RETRY_AFTER_SECONDS, { cause });
}

/**
 * 503: a store (Postgres, Redis, NATS) could not be reached while the request was served; nothing was
 * decided from it. `retryAfterSeconds` travels to the HTTP Retry-After header. Across gRPC the peer's name
 * is added (`Postgres is unreachable (audit service)`).
 */
export class StoreUnavailableError extends AppError {
  constructor(
    readonly store: string,
    where?: string,
    options?: { cause?: unknown },
  ) {
    const message = `${store} is unreachable${where ? ` (${where})` : ''}`;
    super('store_unavailable', message, message, options);
    this.retryAfterSeconds = STORE_RETRY_AFTER_SECONDS;
  }
}

/** What a client is told to wait after a 503 / 502 (Retry-After): a store or a peer back within seconds. */
export const STORE_RETRY_AFTER_SECONDS = 5;

const PG_CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const NATS_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DRAINING', 'CONNECTION_REFUSED', 'DISCONNECT', 'TIMEOUT', '503']);
const STORE_TAG = Symbol.for('agw.store');

/** Mark an error raised while reaching a store (createDb marks connection failures as Postgres). */
export function tagStore<E>(e: E, store: string): E {
  if (e && typeof e === 'object') (e as Record<symbol, unknown>)[STORE_TAG] = store;
  return e;
}

/**
 * Which store a raw driver error says is unreachable (`Postgres`, `Redis`, `NATS`, or `a data store` for a
 * bare socket error), or undefined when the error is anything else. One classifier for every service.
 */
export function unreachableStore(e: unknown): string | undefined {
  if (!e || typeof e !== 'object' || e instanceof AppError) return undefined;
  const err = e as { code?: unknown; message?: unknown; name?: unknown; errors?: unknown[]; [STORE_TAG]?: string };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : '';
  const name = typeof err.name === 'string' ? err.name : '';
  if (name === 'NatsError' && NATS_CODES.has(code)) return 'NATS';
  if (PG_CONNECTION_CODES.has(code) || /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable/.test(message)) return 'Postgres';
  if (name === 'MaxRetriesPerRequestError' || /^Connection is closed\.|Stream isn't writeable and enableOfflineQueue|Reached the max retries per request limit|^Command timed out$/.test(message)) return 'Redis';
  if (NET_CODES.has(code)) return err[STORE_TAG] ?? 'a data store';
  if (Array.isArray(err.errors)) for (const x of err.errors) { const s = unreachableStore(x); if (s) return err[STORE_TAG] ?? s; } // AggregateError (IPv4 + IPv6)
  return undefined;
}

/** The roots of a `loc` located in an HTTP request; anything else is a field named by a service. */
export const HTTP_LOC_ROOTS = ['body', 'query', 'path', 'header', 'arguments'];

/** A validation issue as the edge reports it: a field named by a service is located in the body. */
export function locateAtEdge(i: ValidationIssue): ValidationIssue {
  return HTTP_LOC_ROOTS.includes(String(i.loc[0])) ? i : { ...i, loc: ['body', ...i.loc] };
}

/** The one test of "a dependency could not answer" (a peer: DependencyUnavailableError, a store: StoreUnavailableError, or one rebuilt from gRPC). */
export function isDependencyDown(e: unknown): boolean {
  return e instanceof AppError && (e.code === 'dependency_unavailable' || e.code === 'store_unavailable');
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
