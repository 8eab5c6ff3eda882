/**
 * Multiplexed calls (grpc-multiplexed.ts) over real gRPC servers and sockets: answers matched to their
 * calls, errors rebuilt as the unary call would, deadlines, a peer that dies, and a graceful shutdown that
 * loses no call and handles none twice.
 */
import type { common } from '@agw/proto';
import { type Client, Metadata, makeGenericClientConstructor } from '@grpc/grpc-js';
import { AppError, DependencyUnavailableError, InputError, OverloadedError } from '../src/errors';
import { type PromiseClient, bindService, createClient, startGrpcServer } from '../src/grpc';
import { MultiplexedClient } from '../src/grpc-multiplexed';
import { createLogger } from '../src/logger';

const json = {
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
};
interface EchoReq {
  n: number;
  delayMs?: number;
  fail?: 'input' | 'internal';
}
interface EchoRes {
  n: number;
  trace: string;
}
const definition = {
  echo: { path: '/test.Echo/Echo', requestStream: false as const, responseStream: false as const, ...json } as {
    path: string;
    requestStream: false;
    responseStream: false;
    requestSerialize: (v: EchoReq) => Buffer;
    requestDeserialize: (b: Buffer) => EchoReq;
    responseSerialize: (v: EchoRes) => Buffer;
    responseDeserialize: (b: Buffer) => EchoRes;
  },
  echoStream: { path: '/test.Echo/EchoStream', requestStream: true as const, responseStream: true as const, ...json } as {
    path: string;
    requestStream: true;
    responseStream: true;
    requestSerialize: (v: unknown) => Buffer;
    requestDeserialize: (b: Buffer) => { call_id: number; request: EchoReq | undefined; metadata: Record<string, string> };
    responseSerialize: (v: unknown) => Buffer;
    responseDeserialize: (b: Buffer) => { call_id: number; response: EchoRes | undefined; error: { status: number; details: string; error: common.ErrorInfo | undefined } | undefined };
  },
};
const EchoClient = makeGenericClientConstructor(definition, 'Echo') as unknown as (new (address: string, creds: never, options?: object) => Client) & { service: typeof definition };

const logger = createLogger('test', 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startEcho(handled: number[]) {
  const handler = async (req: EchoReq, md: Metadata): Promise<EchoRes> => {
    if (req.delayMs) await sleep(req.delayMs);
    if (req.fail === 'input') throw InputError.at(['n'], `n ${req.n} is refused`, 'refused');
    if (req.fail === 'internal') throw new Error('secret internals');
    handled.push(req.n);
    return { n: req.n, trace: String(md.get('traceparent')[0] ?? '') };
  };
  return startGrpcServer('127.0.0.1', 0, [bindService(definition as never, { echo: handler, echoStream: handler } as never, logger)]);
}

describe('multiplexed calls over a bidi stream', () => {
  let clients: PromiseClient<typeof definition>[] = [];
  const client = (port: number, deadlineMs = 2000) => {
    const c = createClient(EchoClient as never, `127.0.0.1:${port}`, 'echo service', { deadlineMs }) as unknown as PromiseClient<typeof definition>;
    clients.push(c);
    return c;
  };
  afterEach(() => {
    for (const c of clients) c.close();
    clients = [];
  });

  it('answers each call with its own response, out of order, as the unary method does', async () => {
    const handled: number[] = [];
    const server = await startEcho(handled);
    try {
      const c = client(server.port);
      const md = new Metadata();
      md.set('traceparent', '00-abc-def-01');
      const calls = Array.from({ length: 200 }, (_, n) => c.echoStream({ n, delayMs: (n * 7) % 13 }, { metadata: n === 3 ? md : undefined }));
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.n)).toEqual(Array.from({ length: 200 }, (_, n) => n));
      expect(answers[3].trace).toBe('00-abc-def-01');
      expect(answers[4].trace).toBe('');
      expect(await c.echo({ n: 7 })).toEqual(await c.echoStream({ n: 7 }));
    } finally {
      await server.close();
    }
  });

  it('rebuilds the error the unary call would have had', async () => {
    const server = await startEcho([]);
    try {
      const c = client(server.port);
      const fields = (e: unknown) => (e instanceof AppError ? { kind: e.constructor.name, code: e.code, message: e.message, detail: e.detail } : e);
      const input = await c.echoStream({ n: 1, fail: 'input' }).catch(fields);
      expect(input).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('n 1 is refused'), detail: [{ loc: ['n'] }] });
      expect(input).toEqual(await c.echo({ n: 1, fail: 'input' }).catch(fields));
      const internal = await c.echoStream({ n: 2, fail: 'internal' }).catch(fields);
      expect(internal).toMatchObject({ code: 'internal' });
      expect(JSON.stringify(internal)).not.toContain('secret');
      expect(internal).toEqual(await c.echo({ n: 2, fail: 'internal' }).catch(fields));
      // the stream survives failed calls
      expect((await c.echoStream({ n: 3 })).n).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('fails a call past its deadline on a connected peer as overloaded (not unreachable), and later calls still succeed', async () => {
    const server = await startEcho([]);
    try {
      const c = client(server.port, 100);
      expect((await c.echoStream({ n: 0 })).n).toBe(0); // connected
      const slow = c.echoStream({ n: 1, delayMs: 400 });
      await expect(slow).rejects.toBeInstanceOf(OverloadedError);
      await expect(slow).rejects.toMatchObject({ code: 'overloaded', retryAfterSeconds: 1, message: expect.stringMatching(/overloaded: connected, but no answer within the call's deadline/) });
      // the unary call says the same
      await expect(c.echo({ n: 3, delayMs: 400 })).rejects.toBeInstanceOf(OverloadedError);
      expect((await c.echoStream({ n: 2 })).n).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('a peer nobody listens for is unreachable, deadline or not', async () => {
    const server = await startEcho([]);
    const port = server.port;
    await server.close();
    const c = client(port, 300);
    await expect(c.echoStream({ n: 1 })).rejects.toBeInstanceOf(DependencyUnavailableError);
    await expect(c.echo({ n: 1 })).rejects.toBeInstanceOf(DependencyUnavailableError);
  });

  it('fails the unanswered calls of a peer that goes away, then reaches a new one on the same address', async () => {
    const first = await startEcho([]);
    const port = first.port;
    const c = client(port);
    expect((await c.echoStream({ n: 0 })).n).toBe(0);
    const inFlight = c.echoStream({ n: 1, delayMs: 1000 });
    await sleep(50);
    first.server.forceShutdown();
    await expect(inFlight).rejects.toBeInstanceOf(DependencyUnavailableError);
    const handled: number[] = [];
    const second = await startGrpcServer('127.0.0.1', port, [bindService(definition as never, { echo: async (r: EchoReq) => ({ n: r.n, trace: '' }), echoStream: async (r: EchoReq) => (handled.push(r.n), { n: r.n, trace: '' }) } as never, logger)]);
    try {
      let answered: number | undefined;
      for (let i = 0; i < 50 && answered === undefined; i++) answered = await c.echoStream({ n: 2 }).then((a) => a.n, () => sleep(100).then(() => undefined));
      expect(answered).toBe(2);
      expect(handled).toEqual([2]);
    } finally {
      await second.close();
    }
  });

  it('loses no call and handles none twice when the server shuts down gracefully under load', async () => {
    const handledA: number[] = [];
    const handledB: number[] = [];
    const a = await startEcho(handledA);
    const b = await startEcho(handledB);
    // one client per server; calls keep coming while server a drains and closes, then go to b
    const ca = client(a.port);
    const cb = client(b.port);
    const results: Promise<number>[] = [];
    let closing: Promise<void> | undefined;
    for (let n = 0; n < 400; n++) {
      const target = closing ? cb : ca;
      results.push(target.echoStream({ n, delayMs: n % 5 }).then((r) => r.n));
      if (n === 150) closing = a.close();
      if (n % 20 === 0) await sleep(1);
    }
    const answered = await Promise.allSettled(results);
    await closing;
    await b.close();
    const ok = answered.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value);
    const failed = answered.filter((r) => r.status === 'rejected');
    // a call read by server a before its drain was answered; one it had not read failed cleanly as
    // unreachable (there is no other backend for client a) and was never handled
    for (const f of failed) expect((f as PromiseRejectedResult).reason).toBeInstanceOf(DependencyUnavailableError);
    const handled = [...handledA, ...handledB];
    expect(new Set(handled).size).toBe(handled.length);
    expect(ok.sort((x, y) => x - y)).toEqual([...handled].sort((x, y) => x - y));
    expect(handledA.length).toBeGreaterThan(0);
    // every call sent after the drain began went to server b, whose streams were drained too (the drain is
    // per process): they were sent again on new streams and all answered
    expect(ok.filter((n) => n > 150)).toHaveLength(249);
  });

  it('spreads calls over the replicas of a multi-address target', async () => {
    const [ha, hb]: number[][] = [[], []];
    const [a, b] = [await startEcho(ha), await startEcho(hb)];
    try {
      const both = createClient(EchoClient as never, `127.0.0.1:${a.port},127.0.0.1:${b.port}`, 'echo service', { deadlineMs: 2000 }) as unknown as PromiseClient<typeof definition>;
      clients.push(both);
      // once both replicas are connected (unary calls reach each), the streams opened get one each in turn;
      // streams opened before a replica was ready move to it when they are retired (maxStreamAgeMs)
      for (let i = 0; i < 100 && !(ha.length && hb.length); i++) await both.echo({ n: -1 });
      ha.length = hb.length = 0;
      await Promise.all(Array.from({ length: 200 }, (_, n) => both.echoStream({ n })));
      expect(ha.length).toBeGreaterThan(20);
      expect(hb.length).toBeGreaterThan(20);
      expect(ha.length + hb.length).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('retires old streams for new ones without losing or repeating a call', async () => {
    const handled: number[] = [];
    const server = await startEcho(handled);
    const raw = new EchoClient(`127.0.0.1:${server.port}`, (await import('@grpc/grpc-js')).credentials.createInsecure() as never);
    const mux = new MultiplexedClient<EchoReq, EchoRes>(raw, 'echoStream', { peer: 'echo service', deadlineMs: 2000, streams: 2, maxStreamAgeMs: 20, fromError: () => new AppError('internal', 'x') });
    try {
      const answers: number[] = [];
      for (let round = 0; round < 20; round++) {
        answers.push(...(await Promise.all(Array.from({ length: 25 }, (_, i) => mux.call({ n: round * 25 + i, delayMs: i % 3 }).then((r) => r.n)))));
        await sleep(10);
      }
      expect(answers).toEqual(Array.from({ length: 500 }, (_, n) => n));
      expect([...handled].sort((x, y) => x - y)).toEqual(answers);
    } finally {
      mux.close();
      raw.close();
      await server.close();
    }
  });
});
