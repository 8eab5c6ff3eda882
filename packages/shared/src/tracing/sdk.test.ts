/**
 * The bus hooks on a real tracer provider with an in-memory exporter: which trace a publish, a consumer
 * and a delivery join. A context is only ever the event's own (remembered by its id) or the caller's own
 * path, never whatever context a batch or a timer happens to run in.
 */
import { ROOT_CONTEXT, SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { RPCType, getRPCMetadata, setRPCMetadata } from '@opentelemetry/core';
import { REMEMBERED_MAX, busHooks } from './sdk';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const hooks = busHooks(provider);
const tracer = provider.getTracer('test');
const headersOf = (h: Record<string, string>) => ({ get: (k: string) => h[k] ?? '' });

afterEach(() => exporter.reset());
afterAll(() => provider.shutdown());

it('a remembered event publishes in the trace of the call that made it, and its consumer and delivery continue it', async () => {
  const call = tracer.startSpan('call');
  context.with(trace.setSpan(context.active(), call), () => hooks.remember('ev-1'));
  call.end();
  // the batch runs in another call's context: the event still joins its own
  const other = tracer.startSpan('other call');
  const pub = context.with(trace.setSpan(context.active(), other), () => hooks.publish('decisions.t.allowed', 'ev-1', false))!;
  other.end();
  expect(pub.headers.traceparent).toContain(call.spanContext().traceId);
  pub.end();

  let inside: string | undefined;
  await hooks.consume('decisions.t.allowed', headersOf(pub.headers), 'ev-1', async () => {
    inside = trace.getSpan(context.active())?.spanContext().traceId;
  });
  expect(inside).toBe(call.spanContext().traceId);
  await hooks.within('ev-1', 'webhook deliver', { attempt: 1 }, async () => {
    inside = trace.getSpan(context.active())?.spanContext().spanId;
  });

  const spans = exporter.getFinishedSpans();
  const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
  expect(byName['nats publish'].parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  expect(byName['nats process'].parentSpanContext?.spanId).toBe(byName['nats publish'].spanContext().spanId);
  expect(byName['webhook deliver'].parentSpanContext?.spanId).toBe(byName['nats process'].spanContext().spanId);
  expect(inside).toBe(byName['webhook deliver'].spanContext().spanId);
  expect(new Set(spans.filter((s) => s.name !== 'other call').map((s) => s.spanContext().traceId))).toEqual(new Set([call.spanContext().traceId]));
});

it('makes no trace of its own: a batch item without a remembered context, an untraced message, a delivery nobody traced', async () => {
  const other = tracer.startSpan('other call');
  await context.with(trace.setSpan(context.active(), other), async () => {
    expect(hooks.publish('decisions.t.allowed', 'unknown', false)).toBeUndefined();
    let ran = 0;
    await hooks.within('unknown', 'webhook deliver', {}, async () => void ran++);
    expect(ran).toBe(1);
  });
  other.end();
  expect(context.with(ROOT_CONTEXT, () => hooks.publish('decisions.t.allowed', 'x', true))).toBeUndefined();
  let active: unknown = 'unset';
  await hooks.consume('decisions.t.allowed', headersOf({}), 'ev-2', async () => {
    active = trace.getSpan(context.active());
  });
  expect(active).toBeUndefined();
  expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['other call']);
});

it("a publish on the caller's own path joins the caller; a failed one is marked as an error", () => {
  const call = tracer.startSpan('call');
  const pub = context.with(trace.setSpan(context.active(), call), () => hooks.publish('sessions.t.interrupted', 'ev-3', true))!;
  pub.end(new Error('no stream'));
  call.end();
  const span = exporter.getFinishedSpans().find((s) => s.name === 'nats publish')!;
  expect(span.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  expect(span.status).toMatchObject({ code: 2, message: 'no stream' });
  expect(propagation.extract(ROOT_CONTEXT, pub.headers)).toBeDefined();
});

it('remembers at most REMEMBERED_MAX contexts, forgetting the oldest', () => {
  const call = tracer.startSpan('call');
  context.with(trace.setSpan(context.active(), call), () => {
    for (let i = 0; i <= REMEMBERED_MAX; i++) hooks.remember(`k-${i}`);
  });
  call.end();
  expect(hooks.publish('s', 'k-0', false)).toBeUndefined();
  const last = hooks.publish('s', `k-${REMEMBERED_MAX}`, false);
  expect(last?.headers.traceparent).toContain(call.spanContext().traceId);
  last?.end();
});

it('a multiplexed gRPC call: a client span under the caller, its context in the envelope metadata, a server span under it', async () => {
  const { Metadata } = await import('@grpc/grpc-js');
  const call = tracer.startSpan('call');
  const md = new Metadata();
  await context.with(trace.setSpan(context.active(), call), () =>
    hooks.grpcClient('/agw.audit.v1.AuditService/AppendStream', async (carrier) => {
      for (const [k, v] of Object.entries(carrier)) md.set(k, v);
    }),
  );
  call.end();
  // the server reads the call on a stream another call opened: that stream's context must not leak in
  const stream = tracer.startSpan('stream opened by another call');
  let inside: string | undefined;
  await context.with(trace.setSpan(context.active(), stream), () =>
    hooks.grpcServer('/agw.audit.v1.AuditService/AppendStream', md, async () => {
      inside = trace.getSpan(context.active())?.spanContext().traceId;
    }),
  );
  let detached: unknown = 'unset';
  await context.with(trace.setSpan(context.active(), stream), () =>
    hooks.grpcServer('/agw.audit.v1.AuditService/AppendStream', new Metadata(), async () => {
      detached = trace.getSpan(context.active());
    }),
  );
  stream.end();
  expect(inside).toBe(call.spanContext().traceId);
  expect(detached).toBeUndefined();
  const spans = exporter.getFinishedSpans().filter((s) => s.name.startsWith('grpc.'));
  expect(spans.map((s) => s.name)).toEqual(['grpc.agw.audit.v1.AuditService/AppendStream', 'grpc.agw.audit.v1.AuditService/AppendStream']);
  expect(spans[0].parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  expect(spans[1].parentSpanContext?.spanId).toBe(spans[0].spanContext().spanId);
  expect(spans[1].attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'agw.audit.v1.AuditService', 'rpc.method': 'AppendStream' });
  expect(spans.map((s) => s.kind)).toEqual([SpanKind.CLIENT, SpanKind.SERVER]);
});

it("names the active HTTP server span's route (a route served outside express); nothing when no HTTP span is active", () => {
  const span = tracer.startSpan('POST');
  const rpc: { type: RPCType.HTTP; span: typeof span; route?: string } = { type: RPCType.HTTP, span };
  const ctx = setRPCMetadata(trace.setSpan(ROOT_CONTEXT, span), rpc);
  context.with(ctx, () => hooks.httpRoute('/api/mcp/tools/call'));
  expect(getRPCMetadata(ctx)).toMatchObject({ route: '/api/mcp/tools/call' });
  expect(() => hooks.httpRoute('/elsewhere')).not.toThrow();
  span.end();
});
