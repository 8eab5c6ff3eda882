/**
 * Traces of server-streaming calls (the vault's ExecuteStream) through `implement` and `createClient` with
 * tracing on (the hooks on a real tracer provider, in-memory exporter), on a real gRPC server and socket:
 * a streamed call is a client span under its caller and a server span under that one, in one trace; the
 * handler's work runs in the server span; the client span ends when the stream ends, not before its last
 * message; a failed stream marks both spans as errors; an untraced caller makes no spans at all.
 */
import { type Client, type Metadata, makeGenericClientConstructor } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { NotFoundError } from '../src/errors';
import { bindService, createClient, startGrpcServer } from '../src/grpc';
import { createLogger } from '../src/logger';
import { traceHooks } from '../src/tracing/hooks';
import { busHooks } from '../src/tracing/sdk';

const json = {
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
};
const PATH = '/test.Count/CountStream';
const definition = { countStream: { path: PATH, requestStream: false, responseStream: true, ...json } } as const;
const CountClient = makeGenericClientConstructor(definition as never, 'Count') as unknown as (new (address: string, creds: never, options?: object) => Client) & { service: typeof definition };
type Msg = { n: number; last?: boolean };
type Count = { countStream(r: { to: number; fail?: boolean }, o?: { onMessage?: (m: Msg) => void }): Promise<Msg>; close(): void };

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
const tracer = provider.getTracer('test');

/** what the handler saw of each call: the traceparent it was sent and the span it ran in */
const handled: Array<{ traceparent: string; spanId?: string; traceId?: string }> = [];
let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: Count;

beforeAll(async () => {
  traceHooks.current = busHooks(provider); // as the tracing bootstrap does, before servers and clients are made
  const countStream = async (r: { to: number; fail?: boolean }, md: Metadata, _cancelled: AbortSignal, send: (m: Msg) => void): Promise<Msg> => {
    const active = trace.getSpan(context.active())?.spanContext();
    handled.push({ traceparent: String(md.get('traceparent')[0] ?? ''), spanId: active?.spanId, traceId: active?.traceId });
    // the handler's own work: a child of the server span
    await traceHooks.current!.span('count', { to: r.to }, async () => {
      for (let n = 1; n <= r.to; n++) send({ n });
    });
    if (r.fail) throw new NotFoundError('nothing to count');
    return { n: r.to + 1, last: true };
  };
  server = await startGrpcServer('127.0.0.1', 0, [bindService(definition as never, { countStream } as never, createLogger('test', 'silent'))]);
  client = createClient(CountClient as never, `127.0.0.1:${server.port}`, 'count service', { deadlineMs: 5000 }) as unknown as Count;
});

afterEach(() => {
  exporter.reset();
  handled.length = 0;
});

afterAll(async () => {
  traceHooks.current = undefined;
  client?.close();
  await server?.close();
  await provider.shutdown();
});

const grpcSpans = () => exporter.getFinishedSpans().filter((s) => s.name === `grpc.${PATH.slice(1)}`);

test('a streamed call is a client span under its caller and a server span under it, one trace; the handler works in the server span', async () => {
  const caller = tracer.startSpan('tools/call');
  const seen: Msg[] = [];
  let clientEndedBeforeLast: boolean | undefined;
  const last = await context.with(trace.setSpan(context.active(), caller), () =>
    client.countStream(
      { to: 2 },
      {
        onMessage: (m) => {
          seen.push(m);
          // the stream is still open while its last message is read: the client span has not ended yet
          if (m.last) clientEndedBeforeLast = grpcSpans().some((s) => s.kind === SpanKind.CLIENT);
        },
      },
    ),
  );
  caller.end();
  expect(last).toEqual({ n: 3, last: true });
  expect(seen).toEqual([{ n: 1 }, { n: 2 }, { n: 3, last: true }]);
  expect(clientEndedBeforeLast).toBe(false);

  const spans = grpcSpans();
  expect(spans.map((s) => s.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT].sort());
  const clientSpan = spans.find((s) => s.kind === SpanKind.CLIENT)!;
  const serverSpan = spans.find((s) => s.kind === SpanKind.SERVER)!;
  const traceId = caller.spanContext().traceId;
  expect(clientSpan.spanContext().traceId).toBe(traceId);
  expect(serverSpan.spanContext().traceId).toBe(traceId);
  expect(clientSpan.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
  expect(serverSpan.parentSpanContext?.spanId).toBe(clientSpan.spanContext().spanId);
  expect(clientSpan.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'test.Count', 'rpc.method': 'CountStream' });
  expect(serverSpan.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'test.Count', 'rpc.method': 'CountStream' });
  expect([clientSpan.status.code, serverSpan.status.code]).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);

  // the context rode in the call's metadata, and the handler ran in the server span; its work is a child of it
  expect(handled).toHaveLength(1);
  expect(handled[0].traceparent).toContain(clientSpan.spanContext().spanId);
  expect(handled[0]).toMatchObject({ traceId, spanId: serverSpan.spanContext().spanId });
  const work = exporter.getFinishedSpans().find((s) => s.name === 'count')!;
  expect(work.parentSpanContext?.spanId).toBe(serverSpan.spanContext().spanId);
});

test('a failed stream: both spans end with the error status, after the messages sent before it', async () => {
  const caller = tracer.startSpan('tools/call');
  const seen: Msg[] = [];
  const err = await context
    .with(trace.setSpan(context.active(), caller), () => client.countStream({ to: 2, fail: true }, { onMessage: (m) => seen.push(m) }))
    .catch((e: unknown) => e);
  caller.end();
  expect(err).toMatchObject({ code: 'not_found', message: 'nothing to count' });
  expect(seen).toEqual([{ n: 1 }, { n: 2 }]);

  const spans = grpcSpans();
  expect(spans).toHaveLength(2);
  for (const s of spans) {
    expect(s.spanContext().traceId).toBe(caller.spanContext().traceId);
    expect(s.status).toEqual({ code: SpanStatusCode.ERROR, message: 'nothing to count' });
    expect(s.events.map((e) => e.name)).toContain('exception');
  }
});

test('an untraced caller: the call carries no trace context and makes no spans', async () => {
  const last = await client.countStream({ to: 1 });
  expect(last).toEqual({ n: 2, last: true });
  expect(handled).toEqual([{ traceparent: '', spanId: undefined, traceId: undefined }]);
  expect(exporter.getFinishedSpans()).toEqual([]);
});
