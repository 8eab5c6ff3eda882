/**
 * The seam between the fleet's code and tracing. Nothing here loads OpenTelemetry: `traceHooks.current`
 * stays undefined unless the tracing bootstrap (./register, first import of every service's main.ts)
 * found an exporter configured, so a call site costs one property read when tracing is off.
 *
 * The hooks cover what the instrumentations cannot see: a decision event crosses NATS (the trace context
 * travels in the message headers, W3C `traceparent`), and on both sides it waits in a queue (the audit
 * service's batched publish, the webhook service's delivery table) where the caller's context is lost; the
 * context is remembered by event id in this process until the event is published or delivered.
 */

/** Headers of a NATS message, as far as tracing reads them (nats.js MsgHdrs). */
export interface TraceCarrierIn {
  get(key: string): string;
}

export interface PublishTrace {
  /** the headers to send with the message (traceparent, tracestate) */
  headers: Record<string, string>;
  /** ends the publish span (with the error, if the publish failed) */
  end(err?: unknown): void;
}

export interface TraceHooks {
  /** Remember the active trace context under `key` (an event id) for a later publish or delivery. */
  remember(key: string): void;
  /**
   * Start a producer span for a publish of `subject`, child of the context remembered under `key` (or, with
   * `orActive`, the active one: a publish on the caller's own path). Undefined when neither is traced: the
   * message goes out without a trace context.
   */
  publish(subject: string, key: string, orActive: boolean): PublishTrace | undefined;
  /** Run a consumer's handler in a span whose parent is the context in the message headers; remembers it under `key`. */
  consume<T>(subject: string, headers: TraceCarrierIn | undefined, key: string | undefined, fn: () => Promise<T>): Promise<T>;
  /**
   * Run `fn` in an internal span named `name`, child of the active span (just `fn`, with a no-op `annotate`,
   * when the caller is not traced); `annotate` adds attributes once `fn` knows them (a governed call's
   * record id after its commit).
   */
  span<T>(name: string, attributes: Record<string, string | number>, fn: (annotate: (attributes: Record<string, string | number>) => void) => Promise<T>): Promise<T>;
  /** Run `fn` in a span named `name`, child of the context remembered under `key`; just `fn` when none is. */
  within<T>(key: string, name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T>;
  /**
   * A call of a gRPC method the gRPC instrumentation leaves alone (named `…Stream`): a multiplexed one
   * (grpc-multiplexed.ts: many calls on one long-lived stream) or a server-streaming one (the vault's
   * ExecuteStream). A client span child of the active context, ended when `fn` settles (for a stream: when
   * it ends, with its error); `fn` gets the headers to put into the call's metadata ({} when the caller is
   * not traced).
   */
  grpcClient<T>(path: string, fn: (carrier: Record<string, string>) => Promise<T>): Promise<T>;
  /**
   * The server side: `fn` (the handler) runs in a server span whose parent is in the call's metadata, else
   * detached from the stream's context; the span ends when `fn` settles, with its error.
   */
  grpcServer<T>(path: string, metadata: { get(key: string): unknown[] }, fn: () => Promise<T>): Promise<T>;
  /**
   * Names the active HTTP server span by its route (`http.route`; the span becomes `POST <route>`), as the
   * express instrumentation does for express's routes: for a route served outside express.
   */
  httpRoute(route: string): void;
  /** Export what is still buffered and stop (the service is stopping). */
  shutdown(): Promise<void>;
}

export const traceHooks: { current?: TraceHooks } = {};
