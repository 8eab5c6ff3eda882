/**
 * The one start-up path (`startService`, the body of `runService`) against the real Postgres, Redis and
 * NATS: the stores and peer clients a definition asks for, its HTTP server, readiness on the ops port, and
 * one closing order (ops, HTTP, own closers in reverse, peer clients, stores). `createPeerClients` reads
 * each peer's address and deadline settings and refuses a peer without a deadline.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { type ServiceDefinition, createLogger, createPeerClients, startService } from '../src';
import { TEST_DATABASE_URL, TEST_NATS_URL, TEST_REDIS_URL } from '../src/test-stores';

const config = {
  logLevel: 'silent',
  opsHost: '127.0.0.1',
  opsPort: 0,
  databaseUrl: TEST_DATABASE_URL,
  redisUrl: TEST_REDIS_URL,
  natsUrl: TEST_NATS_URL,
  streamPrefix: `SVC${randomUUID().replace(/-/g, '').slice(0, 8)}`,
  vaultGrpcUrl: '127.0.0.1:1',
  vaultDeadlineMs: 1234,
  policyGrpcUrl: '127.0.0.1:1',
};

it('starts a definition with its stores, peer clients and HTTP server, is ready, and closes in one order', async () => {
  const order: string[] = [];
  const def: ServiceDefinition<typeof config, { vaultDeadlineKnown: boolean }> = {
    name: 'svc-test',
    loadConfig: () => config,
    start: async ({ postgres, redis, nats, peers }) => {
      const db = await postgres();
      const destroy = db.destroy.bind(db);
      db.destroy = async () => {
        order.push('postgres');
        await destroy();
      };
      redis();
      await nats();
      const clients = peers(['vault']);
      const close = clients.vault.close;
      clients.vault.close = () => {
        order.push('vault client');
        close();
      };
      return {
        http: {
          listen: async () => {
            const server = http.createServer((_, res) => res.end('ok'));
            await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
            return { port: (server.address() as { port: number }).port, close: () => new Promise<void>((r) => server.close(() => (order.push('http'), r()))) };
          },
        },
        closers: [() => void order.push('own 1'), () => void order.push('own 2')],
        api: { vaultDeadlineKnown: typeof clients.vault.openSecret === 'function' },
      };
    },
  };
  const started = await startService(def, { logger: createLogger('t', 'silent'), ops: true });
  expect(started.api.vaultDeadlineKnown).toBe(true);
  expect(await (await fetch(`http://127.0.0.1:${started.httpPort}/`)).text()).toBe('ok');
  const ready = await fetch(`http://127.0.0.1:${started.opsPort}/readyz`);
  expect(ready.status).toBe(200);
  const body = await ready.text();
  for (const store of ['postgres', 'redis', 'nats']) expect(body).toContain(store);
  await started.close();
  expect(order).toEqual(['http', 'own 2', 'own 1', 'vault client', 'postgres']);
  await expect(fetch(`http://127.0.0.1:${started.opsPort}/readyz`)).rejects.toThrow();
});

it('closes what it opened when start fails, and says why', async () => {
  let closed = false;
  const def: ServiceDefinition<typeof config> = {
    name: 'svc-test',
    loadConfig: () => config,
    start: async ({ postgres }) => {
      const db = await postgres();
      const destroy = db.destroy.bind(db);
      db.destroy = async () => {
        closed = true;
        await destroy();
      };
      throw new Error('no such template');
    },
  };
  await expect(startService(def, { logger: createLogger('t', 'silent') })).rejects.toThrow('no such template');
  expect(closed).toBe(true);
});

it('creates each peer client with its own deadline setting, a passed one, or refuses to start without one', () => {
  const c = createPeerClients(config, ['vault']);
  expect(typeof c.vault.openSecret).toBe('function');
  c.close();
  expect(() => createPeerClients(config, ['policy'])).toThrow(/no deadline for the policy client \(policyDeadlineMs/);
  const p = createPeerClients(config, ['policy'], { deadlines: { policy: 500 } });
  expect(typeof p.policy.getTenantPolicy).toBe('function');
  p.close();
});
