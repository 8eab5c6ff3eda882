/**
 * Peer calls are counted where every peer client's methods go through (`createClient`), per peer, method and
 * outcome, and the service's `/metrics` registry shows them: a call that succeeds, one the peer refuses (its
 * taxonomy code), one with a retry policy that succeeds on its third attempt (one call, not three). A real
 * gRPC server on a real socket.
 */
import { type Client, makeGenericClientConstructor } from '@grpc/grpc-js';
import { NotFoundError, StoreUnavailableError } from '../src/errors';
import { bindService, createClient, startGrpcServer } from '../src/grpc';
import { createLogger } from '../src/logger';
import { createMetricsRegistry } from '../src/metrics';

const json = {
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
};
const definition = { lookup: { path: '/test.Counted/Lookup', requestStream: false, responseStream: false, ...json } };
const CountedClient = makeGenericClientConstructor(definition as never, 'Counted') as unknown as (new (address: string, creds: never, options?: object) => Client) & {
  service: typeof definition;
};
type Counted = { lookup(r: { n: number }, o?: { retry?: { attempts: number; delayMs: number } }): Promise<{ n: number }>; close(): void };

const logger = createLogger('test', 'silent');
let failuresLeft = 0;
const handler = async (r: { n: number }) => {
  if (r.n < 0) throw new NotFoundError(`no ${r.n}`);
  if (failuresLeft > 0) {
    failuresLeft--;
    throw new StoreUnavailableError('postgres');
  }
  return { n: r.n };
};

/** the samples of one metric, as label set -> value */
async function samples(name: string): Promise<Record<string, number>> {
  const registry = createMetricsRegistry('test');
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries(
    (metric?.values ?? []).filter((v) => v.labels.peer === 'counted service').map((v) => [`${v.labels.method} ${v.labels.outcome}`, v.value]),
  );
}

test('each call is counted once per peer, method and outcome, with the time its caller waited', async () => {
  const server = await startGrpcServer('127.0.0.1', 0, [bindService(definition as never, { lookup: handler } as never, logger)]);
  const c = createClient(CountedClient as never, `127.0.0.1:${server.port}`, 'counted service', { deadlineMs: 5000 }) as unknown as Counted;
  try {
    expect(await c.lookup({ n: 1 })).toEqual({ n: 1 });
    expect(await c.lookup({ n: 2 })).toEqual({ n: 2 });
    await expect(c.lookup({ n: -1 })).rejects.toMatchObject({ code: 'not_found' });
    failuresLeft = 2;
    expect(await c.lookup({ n: 3 }, { retry: { attempts: 5, delayMs: 10 } })).toEqual({ n: 3 }); // three attempts, one call
    failuresLeft = 1;
    await expect(c.lookup({ n: 4 })).rejects.toMatchObject({ code: 'store_unavailable' });

    expect(await samples('agw_peer_calls_total')).toEqual({ 'lookup ok': 3, 'lookup not_found': 1, 'lookup store_unavailable': 1 });
    const seconds = await samples('agw_peer_call_seconds_total');
    expect(Object.keys(seconds).sort()).toEqual(['lookup not_found', 'lookup ok', 'lookup store_unavailable']);
    // the retried call waited out its two back-offs (10 + 20 ms) inside the one call it counts as
    expect(seconds['lookup ok']).toBeGreaterThanOrEqual(0.03);
    for (const v of Object.values(seconds)) expect(v).toBeGreaterThan(0);
  } finally {
    c.close();
    await server.close();
  }
});
