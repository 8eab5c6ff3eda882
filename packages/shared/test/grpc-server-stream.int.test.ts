/**
 * Server-streaming methods (one request, a stream of messages back, the last one the answer: the vault's
 * ExecuteStream) through `bindService` and `createClient`, on a real gRPC server and socket: every message
 * reaches `onMessage` in order and the call resolves with the last; a thrown AppError arrives as the same
 * error; the caller's signal cancels the call and the handler's `cancelled` signal fires.
 */
import { type Client, makeGenericClientConstructor } from '@grpc/grpc-js';
import { AppError, NotFoundError } from '../src/errors';
import { bindService, createClient, startGrpcServer } from '../src/grpc';
import { createLogger } from '../src/logger';

const json = {
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()),
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()),
};
const definition = { count: { path: '/test.Count/Count', requestStream: false, responseStream: true, ...json } } as const;
const CountClient = makeGenericClientConstructor(definition as never, 'Count') as unknown as (new (address: string, creds: never, options?: object) => Client) & { service: typeof definition };
type Msg = { n: number; last?: boolean };
type Count = { count(r: { to: number; fail?: boolean; hang?: boolean }, o?: { onMessage?: (m: Msg) => void; signal?: AbortSignal }): Promise<Msg>; close(): void };

let cancelledSeen = false;
let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: Count;

beforeAll(async () => {
  const count = async (r: { to: number; fail?: boolean; hang?: boolean }, _md: unknown, cancelled: AbortSignal, send: (m: Msg) => void): Promise<Msg> => {
    for (let n = 1; n <= r.to; n++) send({ n });
    if (r.fail) throw new NotFoundError('nothing to count');
    if (r.hang) {
      await new Promise<void>((resolve) => cancelled.addEventListener('abort', () => resolve(), { once: true }));
      cancelledSeen = true;
    }
    return { n: r.to + 1, last: true };
  };
  server = await startGrpcServer('127.0.0.1', 0, [bindService(definition as never, { count } as never, createLogger('test', 'silent'))]);
  client = createClient(CountClient as never, `127.0.0.1:${server.port}`, 'count service', { deadlineMs: 5000 }) as unknown as Count;
});

afterAll(async () => {
  client?.close();
  await server?.close();
});

test('every message in order to onMessage, the last one is the answer', async () => {
  const seen: Msg[] = [];
  const last = await client.count({ to: 3 }, { onMessage: (m) => seen.push(m) });
  expect(seen).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4, last: true }]);
  expect(last).toEqual({ n: 4, last: true });
});

test('a thrown AppError arrives as the same error, after the messages sent before it', async () => {
  const seen: Msg[] = [];
  const err = await client.count({ to: 2, fail: true }, { onMessage: (m) => seen.push(m) }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ code: 'not_found', message: 'nothing to count' });
  expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
});

test('the caller’s signal cancels the call; the handler sees it', async () => {
  const ctl = new AbortController();
  const call = client.count({ to: 1, hang: true }, { signal: ctl.signal, onMessage: () => ctl.abort() });
  await expect(call).rejects.toMatchObject({ code: 'dependency_unavailable' });
  for (let i = 0; i < 100 && !cancelledSeen; i++) await new Promise((r) => setTimeout(r, 20));
  expect(cancelledSeen).toBe(true);
});
