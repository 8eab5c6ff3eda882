/**
 * A peer that restarts (a deploy, a crash and its restart): calls made while the client's channel still
 * waits for its next reconnect attempt are sent once it reconnects, not failed at once (createClient's
 * readyGate); a peer that stays away fails them after the short wait, well before their deadline.
 * Real gRPC servers on real sockets, unary and multiplexed methods.
 */
import { type Client, Metadata, connectivityState, makeGenericClientConstructor } from '@grpc/grpc-js';
import { DependencyUnavailableError } from '../src/errors';
import { READY_GRACE_MS, bindService, createClient, startGrpcServer } from '../src/grpc';
import { createLogger } from '../src/logger';

const json = {
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
};
const definition = {
  echo: { path: '/test.Echo/Echo', requestStream: false, responseStream: false, ...json },
  echoStream: { path: '/test.Echo/EchoStream', requestStream: true, responseStream: true, ...json },
};
const EchoClient = makeGenericClientConstructor(definition as never, 'Echo') as unknown as (new (address: string, creds: never, options?: object) => Client) & {
  service: typeof definition;
};
type Echo = { echo(r: { n: number }): Promise<{ n: number }>; echoStream(r: { n: number }): Promise<{ n: number }>; close(): void; raw: Client };

const logger = createLogger('test', 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const handler = async (r: { n: number }, _md: Metadata) => ({ n: r.n });
const start = (port = 0) => startGrpcServer('127.0.0.1', port, [bindService(definition as never, { echo: handler, echoStream: handler } as never, logger)]);

/** waits until the channel has noticed the peer is gone (TRANSIENT_FAILURE) */
async function untilDown(c: Echo): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await c.echo({ n: -1 }).catch(() => undefined);
    if (c.raw.getChannel().getConnectivityState(false) === connectivityState.TRANSIENT_FAILURE) return;
    await sleep(20);
  }
  throw new Error('the channel never saw the peer go away');
}

describe('calls across a restart of their peer', () => {
  it.each(['echo', 'echoStream'] as const)('%s: calls made just after the peer is back are answered, none fails', async (method) => {
    const first = await start();
    const port = first.port;
    const c = createClient(EchoClient as never, `127.0.0.1:${port}`, 'echo service', { deadlineMs: 5000 }) as unknown as Echo;
    try {
      expect((await c[method]({ n: 0 })).n).toBe(0);
      first.server.forceShutdown();
      await untilDown(c);
      await sleep(1200); // the channel's back-off has grown to its cap: without the wait, the next calls fail fast
      const second = await start(port);
      try {
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => c[method]({ n: i + 1 }).then((a) => a.n, (e: Error) => e.message)));
        expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      } finally {
        await second.close();
      }
    } finally {
      c.close();
    }
  });

  it.each(['echo', 'echoStream'] as const)('%s: a peer that stays away fails the first call after the short wait (not at its deadline), later ones at once', async (method) => {
    const gone = await start();
    const port = gone.port;
    const c = createClient(EchoClient as never, `127.0.0.1:${port}`, 'echo service', { deadlineMs: 8000 }) as unknown as Echo;
    try {
      expect((await c[method]({ n: 0 })).n).toBe(0);
      gone.server.forceShutdown();
      await untilDown(c);
      const t0 = Date.now();
      await expect(c[method]({ n: 1 })).rejects.toBeInstanceOf(DependencyUnavailableError);
      const took = Date.now() - t0;
      expect(took).toBeGreaterThanOrEqual(READY_GRACE_MS - 100);
      expect(took).toBeLessThan(4000);
      // the outage is older than the wait now: later calls fail at once again (a long outage costs no latency)
      const t1 = Date.now();
      await expect(c[method]({ n: 2 })).rejects.toBeInstanceOf(DependencyUnavailableError);
      expect(Date.now() - t1).toBeLessThan(300);
    } finally {
      c.close();
    }
  });
});
