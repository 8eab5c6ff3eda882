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

/** The roots of a `loc` located in an HTTP request; anything else is a field named by a service. */
export const HTTP_LOC_ROOTS = ['body', 'query', 'path', 'header', 'arguments'];

/** A validation issue as the edge reports it: a field named by a service is located in the body. */
export function locateAtEdge(i: ValidationIssue): ValidationIssue {
  return HTTP_LOC_ROOTS.includes(String(i.loc[0])) ? i : { ...i, loc: ['body', ...i.loc] };
}

/** The one test of "a dependency could not answer" (a DependencyUnavailableError, or one rebuilt from gRPC). */
export function isDependencyDown(e: unknown): boolean {
  return e instanceof AppError && e.code === 'dependency_unavailable';
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
