/**
 * gRPC plumbing shared by every service: the error taxonomy travels as a gRPC status plus an
 * `agw-error-bin` metadata entry, so a client rebuilds the same AppError the server threw.
 * Servers implement promise-returning handlers (`implement`); clients get promise-returning stubs with a
 * deadline (`createClient`). An unreachable peer becomes a DependencyUnavailableError.
 */
import {
  type ChannelCredentials,
  type Client,
  Metadata,
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
  credentials,
  status,
} from '@grpc/grpc-js';
import { AppError, DependencyUnavailableError, type ErrorCode } from './errors';
import type { Logger } from './logger';

const ERROR_KEY = 'agw-error-bin';

const toStatus: Record<ErrorCode, status> = {
  invalid_input: status.INVALID_ARGUMENT,
  unauthenticated: status.UNAUTHENTICATED,
  forbidden: status.PERMISSION_DENIED,
  not_found: status.NOT_FOUND,
  conflict: status.FAILED_PRECONDITION,
  rate_limited: status.RESOURCE_EXHAUSTED,
  payload_too_large: status.OUT_OF_RANGE,
  dependency_unavailable: status.UNAVAILABLE,
  internal: status.INTERNAL,
};

/** AppError (or anything thrown) to a gRPC ServiceError. Internal errors never leak their message. */
export function toServiceError(e: unknown): Partial<ServiceError> {
  const metadata = new Metadata();
  if (e instanceof AppError) {
    metadata.set(ERROR_KEY, Buffer.from(JSON.stringify({ code: e.code, message: e.message, detail: e.detail, retryAfterSeconds: e.retryAfterSeconds })));
    return { code: toStatus[e.code], details: e.message, metadata };
  }
  return { code: status.INTERNAL, details: 'internal error', metadata };
}

/** A gRPC client error back to the taxonomy. */
export function fromServiceError(e: ServiceError, peer: string): AppError {
  const raw = e.metadata?.get(ERROR_KEY)?.[0];
  if (raw) {
    try {
      const { code, message, detail, retryAfterSeconds } = JSON.parse(Buffer.isBuffer(raw) ? raw.toString() : String(raw));
      const err = new AppError(code, message, detail, { cause: e });
      if (typeof retryAfterSeconds === 'number') err.retryAfterSeconds = retryAfterSeconds;
      return err;
    } catch {
      /* fall through */
    }
  }
  if (e.code === status.UNAVAILABLE || e.code === status.DEADLINE_EXCEEDED || e.code === status.CANCELLED) {
    return new DependencyUnavailableError(`${peer} is unreachable`, { cause: e });
  }
  return new AppError('internal', `${peer} failed`, `${peer} failed`, { cause: e });
}

type Req<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type Res<M> = M extends { responseDeserialize: (b: Buffer) => infer R } ? R : never;

/** A service definition and its implementation, ready for `startGrpcServer`. */
export interface GrpcServiceBinding {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

export type PromiseHandlers<S extends ServiceDefinition> = {
  [K in keyof S]: (request: Req<S[K]>, metadata: Metadata) => Promise<Res<S[K]>>;
};

/** Promise-returning handlers to a grpc-js implementation, mapping thrown errors once. */
export function implement<S extends ServiceDefinition>(
  definition: S,
  handlers: PromiseHandlers<S>,
  logger: Logger,
): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const name of Object.keys(definition) as (keyof S & string)[]) {
    const h = handlers[name];
    impl[name] = (call: { request: unknown; metadata: Metadata }, callback: (err: Partial<ServiceError> | null, res?: unknown) => void) => {
      h(call.request as never, call.metadata).then(
        (res) => callback(null, res),
        (err: unknown) => {
          if (!(err instanceof AppError) || err.code === 'internal') logger.error({ err, method: name }, 'gRPC handler failed');
          callback(toServiceError(err));
        },
      );
    };
  }
  return impl;
}

export async function startGrpcServer(
  host: string,
  port: number,
  services: GrpcServiceBinding[],
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = new Server({ 'grpc.max_receive_message_length': 16 * 1024 * 1024 });
  for (const s of services) server.addService(s.definition, s.implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    server,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 5000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      }),
  };
}

export type PromiseClient<S extends ServiceDefinition> = {
  [K in keyof S]: (request: Req<S[K]>, options?: { deadlineMs?: number; metadata?: Metadata }) => Promise<Res<S[K]>>;
} & { close(): void; raw: Client };

type ClientCtor = new (address: string, creds: ChannelCredentials, options?: object) => Client;

/** A promise-returning client with a per-call deadline and errors mapped back to the taxonomy. */
export function createClient<S extends ServiceDefinition>(
  Ctor: ClientCtor & { service: S },
  address: string,
  peer: string,
  defaults: { deadlineMs?: number } = {},
): PromiseClient<S> {
  const raw = new Ctor(address, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2000,
  });
  const out: Record<string, unknown> = { close: () => raw.close(), raw };
  const methods = Ctor.service;
  for (const key of Object.keys(methods)) {
    const fn = (raw as unknown as Record<string, (...a: unknown[]) => void>)[key].bind(raw);
    out[key] = (request: unknown, options: { deadlineMs?: number; metadata?: Metadata } = {}) =>
      new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + (options.deadlineMs ?? defaults.deadlineMs ?? 10_000));
        // grpc-js captures a stack trace (`new Error()`) on every unary call, only to append it to a failed
        // call's error; ours are rebuilt into the taxonomy by fromServiceError and never show it. Capturing
        // none was 2.8 % of the gateway's busy time under load (docs/performance.md, change 9).
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          fn(request, options.metadata ?? new Metadata(), { deadline }, (err: ServiceError | null, res: unknown) =>
            err ? reject(fromServiceError(err, peer)) : resolve(res),
          );
        } finally {
          Error.stackTraceLimit = limit;
        }
      });
  }
  return out as PromiseClient<S>;
}
