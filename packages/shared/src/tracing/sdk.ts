/**
 * The OpenTelemetry SDK of a service, loaded only by ./register when traces are to be exported:
 * a NodeTracerProvider (AsyncLocalStorage context, W3C trace-context propagation, the sampler of
 * OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, batching as OTEL_BSP_* say), the OTLP exporter configured
 * by the OTEL_EXPORTER_OTLP_* variables (http/protobuf or http/json), and the instrumentations of the
 * libraries the fleet talks through: http (the gateway's edge, the webhook and egress clients), express,
 * grpc-js (client and server: the context rides in the call metadata), pg and ioredis (only inside a
 * traced operation: background polling makes no traces of its own). The bus is traced by the hooks below.
 */
import { hostname } from 'node:os';
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import { RPCType, getRPCMetadata } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { type TraceCarrierIn, type TraceHooks, traceHooks } from './hooks';
import { otlpProtocol, serviceNameOf, tracesExporters } from './settings';

type Env = Record<string, string | undefined>;

/** Most trace contexts kept waiting for their event's publish or delivery (the oldest go first). */
export const REMEMBERED_MAX = 10_000;

/** Paths of the ops server (probes, scrapes): never traced. */
const OPS_PATHS = /^\/(healthz|readyz|metrics)(\?|$)/;

function exporterOf(kind: 'otlp' | 'console', env: Env): SpanExporter {
  if (kind === 'console') return new ConsoleSpanExporter();
  if (otlpProtocol(env) === 'http/json') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/** Start tracing for this process (once); `entry` is the main module's path (names the service). */
export function startTracing(env: Env, entry: string): NodeTracerProvider {
  const serviceName = serviceNameOf(env, entry);
  const resource = defaultResource()
    // the replica: the pod's name on Kubernetes (its host name), and the process (several replicas on one host locally)
    .merge(resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'agw', 'service.instance.id': `${hostname()}:${process.pid}` }))
    .merge(detectResources({ detectors: [envDetector] }));
  const spanProcessors: SpanProcessor[] = tracesExporters(env).map((kind) => new BatchSpanProcessor(exporterOf(kind, env)));
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => OPS_PATHS.test(req.url ?? '') }),
      new ExpressInstrumentation({ ignoreLayersType: ['middleware' as never, 'router' as never] }),
      // the multiplexed methods (AppendStream, EvaluateStream: many calls on one long-lived stream) are traced
      // per call by the hooks below; a span per stream would tie every call to the call that opened it. The
      // server-streaming ones (ExecuteStream) are traced by the same hooks in grpc.ts (`implement`,
      // `createClient`), so they are named `…Stream` too and left alone here
      new GrpcInstrumentation({ ignoreGrpcMethods: [/Stream$/] }),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  traceHooks.current = busHooks(provider);
  return provider;
}

const getter = {
  get: (carrier: TraceCarrierIn, key: string) => carrier.get(key) || undefined,
  keys: () => ['traceparent', 'tracestate'],
};

const metadataGetter = {
  get: (md: { get(key: string): unknown[] }, key: string) => {
    const v = md.get(key)[0];
    return v === undefined ? undefined : String(v);
  },
  keys: () => ['traceparent', 'tracestate'],
};

/** `/agw.audit.v1.AuditService/AppendStream` as the RPC semantic conventions name it. */
function rpcAttributes(path: string): Record<string, string> {
  const [service = '', method = ''] = path.slice(1).split('/');
  return { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method };
}

function endSpan(span: Span, err?: unknown): void {
  if (err) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
  span.end();
}

/** Run `fn` in `ctx` (a context holding `span`) and end the span with its outcome: its error, if it throws. */
async function inSpan<T>(span: Span, ctx: Context, fn: () => T | Promise<T>): Promise<T> {
  try {
    const r = await context.with(ctx, fn);
    endSpan(span);
    return r;
  } catch (e) {
    endSpan(span, e);
    throw e;
  }
}

/** The hooks of ./hooks, on this provider. */
export function busHooks(provider: NodeTracerProvider): TraceHooks {
  const tracer = provider.getTracer('@agw/shared');
  const remembered = new Map<string, Context>();
  const keep = (key: string, ctx: Context) => {
    remembered.delete(key);
    remembered.set(key, ctx);
    if (remembered.size > REMEMBERED_MAX) remembered.delete(remembered.keys().next().value as string);
  };
  const take = (key: string): Context | undefined => {
    const ctx = remembered.get(key);
    if (ctx) remembered.delete(key);
    return ctx;
  };
  return {
    remember(key) {
      if (trace.getSpan(context.active())) keep(key, context.active());
    },
    publish(subject, key, orActive) {
      // never the active context of a batch or a timer: it belongs to another call (the group commit runs in
      // its first caller's context), so only the event's own remembered context, or the caller's own path
      const parent = take(key) ?? (orActive ? context.active() : undefined);
      if (!parent || !trace.getSpan(parent)) return undefined;
      const span = tracer.startSpan(
        'nats publish',
        {
          kind: SpanKind.PRODUCER,
          attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': subject, 'messaging.message.id': key },
        },
        parent,
      );
      const headers: Record<string, string> = {};
      propagation.inject(trace.setSpan(parent, span), headers);
      return { headers, end: (err) => endSpan(span, err) };
    },
    async consume(subject, headers, key, fn) {
      const parent = headers ? propagation.extract(ROOT_CONTEXT, headers, getter) : ROOT_CONTEXT;
      if (!trace.getSpan(parent)) return fn(); // an untraced message makes no trace of its own
      const span = tracer.startSpan(
        'nats process',
        {
          kind: SpanKind.CONSUMER,
          attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'process', 'messaging.destination.name': subject, ...(key ? { 'messaging.message.id': key } : {}) },
        },
        parent,
      );
      const ctx = trace.setSpan(parent, span);
      if (key) keep(key, ctx);
      return inSpan(span, ctx, fn);
    },
    async span(name, attributes, fn) {
      const parent = context.active();
      if (!trace.getSpan(parent)) return fn(() => undefined);
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
      return inSpan(span, trace.setSpan(parent, span), () => fn((a) => span.setAttributes(a)));
    },
    async within(key, name, attributes, fn) {
      const parent = take(key);
      if (!parent || !trace.getSpan(parent)) return fn();
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
      return inSpan(span, trace.setSpan(parent, span), fn);
    },
    async grpcClient(path, fn) {
      const parent = context.active();
      if (!trace.getSpan(parent)) return fn({});
      const span = tracer.startSpan(`grpc.${path.slice(1)}`, { kind: SpanKind.CLIENT, attributes: rpcAttributes(path) }, parent);
      const carrier: Record<string, string> = {};
      const ctx = trace.setSpan(parent, span);
      propagation.inject(ctx, carrier);
      return inSpan(span, ctx, () => fn(carrier));
    },
    async grpcServer(path, metadata, fn) {
      const parent = propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
      if (!trace.getSpan(parent)) return context.with(ROOT_CONTEXT, fn); // not the stream's (first caller's) context
      const span = tracer.startSpan(`grpc.${path.slice(1)}`, { kind: SpanKind.SERVER, attributes: rpcAttributes(path) }, parent);
      return inSpan(span, trace.setSpan(parent, span), fn);
    },
    httpRoute(route) {
      const rpc = getRPCMetadata(context.active());
      if (rpc?.type === RPCType.HTTP) rpc.route = route;
    },
    shutdown: () => provider.shutdown(),
  };
}
