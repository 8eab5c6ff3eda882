/**
 * One gRPC client in front of several replicas (the fleet at AGW_REPLICAS > 1): a comma-separated address
 * list becomes one channel that spreads calls over every replica and keeps going when one of them dies.
 */
import { type ServiceDefinition, makeGenericClientConstructor } from '@grpc/grpc-js';
import { bindService, createClient, createLogger, grpcTarget, startGrpcServer } from '../src';

const json = {
  requestStream: false,
  responseStream: false,
  requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  requestDeserialize: (b: Buffer) => JSON.parse(b.toString()) as { n: number },
  responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  responseDeserialize: (b: Buffer) => JSON.parse(b.toString()) as { replica: string },
};
const definition = { whoAmI: { path: '/agw.test.Replica/WhoAmI', ...json } } satisfies ServiceDefinition;
const Ctor = makeGenericClientConstructor(definition, 'Replica') as unknown as (new (...a: never[]) => never) & { service: typeof definition };
const logger = createLogger('grpc-replicas-test', 'silent');

async function replica(name: string) {
  return startGrpcServer('127.0.0.1', 0, [bindService(definition, { whoAmI: async () => ({ replica: name }) }, logger)]);
}

describe('grpcTarget', () => {
  it('keeps one address as it is and turns a list of replicas into one multi-address target', () => {
    expect(grpcTarget('127.0.0.1:50051')).toBe('127.0.0.1:50051');
    expect(grpcTarget('dns:///policy-headless:50051')).toBe('dns:///policy-headless:50051');
    expect(grpcTarget('127.0.0.1:50051, 127.0.0.1:50061')).toBe('ipv4:127.0.0.1:50051,127.0.0.1:50061');
    expect(grpcTarget('[::1]:50051,[::1]:50061')).toBe('ipv6:[::1]:50051,[::1]:50061');
  });

  it('refuses a list of host names with a message saying what to use instead', () => {
    expect(() => grpcTarget('policy-0:50051,policy-1:50051')).toThrow(/IP address and port.*dns:\/\/\//);
  });
});

describe('a client of several replicas', () => {
  it('spreads calls over every replica and carries on when one of them is gone', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const client = createClient(Ctor as never, `127.0.0.1:${a.port},127.0.0.1:${b.port}`, 'test peer', { deadlineMs: 3000 }) as unknown as {
      whoAmI(r: { n: number }): Promise<{ replica: string }>;
      close(): void;
    };
    try {
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) seen.add((await client.whoAmI({ n: i })).replica);
      expect([...seen].sort()).toEqual(['a', 'b']);

      a.server.forceShutdown(); // replica a dies
      const after: string[] = [];
      for (let i = 0; i < 20; i++) {
        // a call already routed to the dead replica may fail once; every later call reaches b
        after.push(await client.whoAmI({ n: i }).then((r) => r.replica, () => 'failed'));
      }
      expect(after.filter((r) => r === 'failed').length).toBeLessThanOrEqual(1);
      expect(after.slice(2).every((r) => r === 'b')).toBe(true);
    } finally {
      client.close();
      await b.close();
    }
  });
});
