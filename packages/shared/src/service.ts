/**
 * The one way to start a service. A service's `main.ts` declares its name, its config loader and a
 * `start` that builds its domain from a context; `runService` does the rest, the same way for every
 * service:
 * - loads the config (a bad value: one readable line, exit 1), creates the logger and metrics registry;
 * - hands out the shared stores on demand (`ctx.postgres()`, `ctx.redis()`, `ctx.nats()`): each is
 *   connected once, checked, added to `/readyz` and closed last;
 * - hands out gRPC clients of other services (`ctx.peers(['policy', 'audit'])`, @agw/shared
 *   `createPeerClients`: the config's address and deadline settings), closed after the service's own closers;
 * - starts the gRPC server from the bindings `start` returns (on the config's gRPC host and port), and the
 *   HTTP server it returns (`http`: the gateway's edge, which drains its own requests when closed);
 * - serves `/healthz`, `/readyz` and `/metrics` on the config's ops port;
 * - on SIGTERM/SIGINT closes in order: ops server, gRPC server (drain), HTTP server (drain), the service's
 *   own closers (reverse order), the peer clients, then the stores; a start-up failure is one readable line
 *   (no stack trace for a known cause).
 *
 * Every service exports its definition (`services/<name>/src/<name>.service.ts`); its main.ts only runs it.
 * Tests start the same definition in-process with `startService(def, { config, logger, overrides })` (as
 * Backstage's `startTestBackend` does): the same stores, clients, servers and closing order, no signal
 * handlers, no ops server unless asked, and `close()` instead of an exit. `overrides` puts a test's part in
 * place of one the definition would build: a peer client (`peers: { vault: stub }`, never dialled) or a part
 * the definition names in its overrides type (a signer, a clock, a DNS look-up), read from `ctx.overrides`.
 * `startTestService(def, { env, overrides })` is that start as a test makes it: the config loaded from the
 * local test stores' environment (`env` on top), the database migrated, a free loopback gRPC port, silent logs.
 *
 * @example
 * ```ts
 * runService({
 *   name: 'policy',
 *   loadConfig: loadPolicyConfig,
 *   start: async ({ config, logger, postgres, redis }) => {
 *     const evaluation = new PolicyEvaluation(await postgres(), redis(), …);
 *     return { grpc: [policyGrpcService({ evaluation }, logger)] };
 *   },
 * });
 * ```
 */
import type { Registry } from 'prom-client';
import { type Bus, connectBus } from './bus/bus';
import { type Db, createDb } from './db/database';
import { migrateToLatest } from './db/migrate';
import { type GrpcServiceBinding, startGrpcServer } from './grpc';
import { type Logger, createLogger } from './logger';
import { createMetricsRegistry } from './metrics';
import { type ReadinessCheck, startOpsServer } from './ops-server';
import { type PeerClient, type PeerClientOptions, type PeerClients, type PeerConfig, type PeerName, createPeerClients } from './peer-clients';
import { type Redis, createRedis } from './redis';
import { pingNats, pingPostgres } from './stores';
import { TEST_DATABASE_URL, TEST_NATS_URL, TEST_REDIS_URL } from './test-stores';
import { traceHooks } from './tracing/hooks';

type Closer = () => Promise<void> | void;

/** The settings runService reads (every service config has them; stores and gRPC only where used). */
export interface ServiceConfig {
  logLevel: string;
  opsHost: string;
  opsPort: number;
  grpcHost?: string;
  grpcPort?: number;
  databaseUrl?: string;
  databasePoolMax?: number;
  databaseAcquireTimeoutMs?: number;
  redisUrl?: string;
  redisCommandTimeoutMs?: number;
  natsUrl?: string;
  streamPrefix?: string;
}

/**
 * What a test puts in place of what a service would build: peer clients by name (used instead of dialling
 * the configured address; the test closes its own), and the parts `O` the definition lets a test replace.
 */
export type ServiceOverrides<O extends object = object> = Partial<O> & { peers?: { [K in PeerName]?: PeerClient<K> } };

export interface ServiceContext<C extends ServiceConfig, O extends object = object> {
  name: string;
  config: C;
  /** what the test that started this service replaces (`startService(def, { overrides })`); empty in runService */
  overrides: ServiceOverrides<O>;
  logger: Logger;
  registry: Registry;
  /** The Postgres pool (created and checked on first use; readiness-checked; closed last). */
  postgres(options?: { max?: number }): Promise<Db>;
  /** The Redis client (readiness-checked; closed last). */
  redis(): Redis;
  /**
   * The NATS bus with the fleet's streams (drained last). Readiness-checked unless `readiness: false`: a
   * service that only follows cache invalidations on it must stay ready while NATS is away (its caches'
   * TTLs bound what it may miss, and it drops them all when the connection comes back).
   */
  nats(options?: { readiness?: boolean }): Promise<Bus>;
  /** gRPC clients of other services (`createPeerClients` on this config, or the overrides' `peers`), closed after the service's own closers. */
  peers<N extends PeerName>(names: readonly N[], options?: PeerClientOptions<N>): PeerClients<N>;
}

/** A listening HTTP server; `close()` stops taking connections and drains the requests in flight. */
export interface ListeningServer {
  port: number;
  close(): Promise<void> | void;
}

export interface StartedParts<A = unknown> {
  /** gRPC services to serve on the config's gRPC host/port */
  grpc?: GrpcServiceBinding[];
  /** an HTTP server to start once the service is built (closed right after the gRPC server) */
  http?: { listen(): Promise<ListeningServer> };
  /** what an in-process test reaches into (`startService(...).api`); runService ignores it */
  api?: A;
  /** the service's own resources, closed in reverse order after the gRPC server drained */
  closers?: Closer[];
  /** readiness checks beyond the stores' */
  checks?: Record<string, ReadinessCheck>;
  /** fields for the "started" log line */
  info?: Record<string, unknown>;
}

/** A service: its name, its config loader, and how it starts (`O`: the parts a test may override). */
export interface ServiceDefinition<C extends ServiceConfig, A = unknown, O extends object = object> {
  name: string;
  /** the config from `env` (default: the process environment) */
  loadConfig: (env?: Record<string, string | undefined>) => C;
  start: (ctx: ServiceContext<C, O>) => Promise<StartedParts<A>>;
}

export interface StartServiceOptions<C, O extends object = object> {
  /** the config (default: the definition's `loadConfig()`) */
  config?: C;
  /** parts the test puts in place of the definition's own (peer clients by name, and the definition's `O`) */
  overrides?: ServiceOverrides<O>;
  logger?: Logger;
  registry?: Registry;
  /** serve `/healthz`, `/readyz`, `/metrics` on the config's ops port (runService: yes; tests: no unless asked) */
  ops?: boolean;
  /** close what was opened when start fails (default); runService exits at once instead */
  closeOnFailure?: boolean;
}

/** A started service: its ports, what `start` exposed, and its ordered shutdown. */
export interface StartedService<C, A> {
  config: C;
  logger: Logger;
  api: A;
  grpcPort?: number;
  httpPort?: number;
  opsPort?: number;
  /** closes in order: ops server, gRPC server, HTTP server, own closers (reverse), peer clients, stores */
  close(): Promise<void>;
}

/**
 * Start a service definition in this process (runService's body without signals and exit; tests use it
 * directly). A failure during start closes what was already opened and rethrows.
 */
export async function startService<C extends ServiceConfig, A = unknown, O extends object = object>(
  def: ServiceDefinition<C, A, O>,
  options: StartServiceOptions<C, O> = {},
): Promise<StartedService<C, A>> {
  const config = options.config ?? def.loadConfig();
  const logger = options.logger ?? createLogger(def.name, config.logLevel as Parameters<typeof createLogger>[1]);
  const registry = options.registry ?? createMetricsRegistry(def.name);
  const storeClosers: Closer[] = [];
  const peerClosers: Closer[] = [];
  const checks: Record<string, ReadinessCheck> = {};
  let db: Promise<Db> | undefined;
  let redis: Redis | undefined;
  let bus: Promise<Bus> | undefined;
  const need = <T>(value: T | undefined, env: string): T => {
    if (value === undefined) throw new Error(`${def.name} uses a store its config does not name (${env})`);
    return value;
  };
  const overrides: ServiceOverrides<O> = options.overrides ?? {};
  const ctx: ServiceContext<C, O> = {
    name: def.name,
    config,
    overrides,
    logger,
    registry,
    postgres: (options) =>
      (db ??= (async () => {
        const d = createDb(need(config.databaseUrl, 'DATABASE_URL'), { max: config.databasePoolMax, acquireTimeoutMs: config.databaseAcquireTimeoutMs, ...options });
        storeClosers.push(() => d.destroy());
        await pingPostgres(d);
        checks.postgres = () => pingPostgres(d);
        return d;
      })()),
    redis: () => {
      if (!redis) {
        const r = createRedis(need(config.redisUrl, 'REDIS_URL'), { commandTimeoutMs: config.redisCommandTimeoutMs });
        redis = r;
        storeClosers.push(() => r.disconnect());
        checks.redis = async () => void (await r.ping());
      }
      return redis;
    },
    nats: (options) =>
      (bus ??= (async () => {
        const b = await connectBus(need(config.natsUrl, 'NATS_URL'), config.streamPrefix ?? '', def.name);
        storeClosers.push(() => b.close());
        if (options?.readiness !== false) checks.nats = () => pingNats(b);
        return b;
      })()),
    peers: (names, options) => {
      type N = (typeof names)[number];
      const given = overrides.peers ?? {};
      // an overridden peer is the test's client (not dialled, closed by the test); the rest are made here
      const clients = createPeerClients(config as unknown as PeerConfig<N>, names.filter((n) => !given[n]), options);
      peerClosers.push(() => clients.close());
      for (const n of names) if (given[n]) (clients as Record<string, unknown>)[n] = given[n];
      return clients;
    },
  };

  const closers: Closer[] = [];
  const close = async () => {
    for (const c of closers.splice(0)) {
      try {
        await c();
      } catch (e) {
        logger.warn({ err: e }, 'error while closing');
      }
    }
  };
  const opened = (c: Closer) => closers.unshift(c); // the last opened is closed first
  const each = (list: Closer[]) => async () => {
    for (const c of [...list].reverse()) {
      try {
        await c();
      } catch (e) {
        logger.warn({ err: e }, 'error while closing');
      }
    }
  };
  opened(each(storeClosers));
  opened(each(peerClosers));
  try {
    const parts = await def.start(ctx);
    for (const c of parts.closers ?? []) opened(c);
    let httpPort: number | undefined;
    if (parts.http) {
      const server = await parts.http.listen();
      httpPort = server.port;
      opened(() => server.close());
    }
    let grpcPort: number | undefined;
    if (parts.grpc?.length) {
      const grpc = await startGrpcServer(need(config.grpcHost, 'GRPC_HOST'), need(config.grpcPort, 'GRPC_PORT'), parts.grpc);
      grpcPort = grpc.port;
      opened(() => grpc.close());
    }
    let opsPort: number | undefined;
    if (options.ops) {
      const ops = await startOpsServer({ host: config.opsHost, port: config.opsPort, registry, checks: { ...checks, ...parts.checks } });
      opsPort = ops.port;
      opened(() => ops.close());
    }
    logger.info(
      { ...(grpcPort !== undefined ? { grpcPort } : {}), ...(httpPort !== undefined ? { port: httpPort } : {}), ...(opsPort !== undefined ? { opsPort } : {}), ...parts.info },
      `${def.name} started`,
    );
    return { config, logger, api: parts.api as A, grpcPort, httpPort, opsPort, close };
  } catch (e) {
    if (options.closeOnFailure !== false) await close();
    throw e;
  }
}

/** How a test starts a definition: settings on top of the local test environment, and the parts it replaces. */
export interface TestServiceOptions<C, O extends object = object> {
  /** environment variables on top of the process's and the local test stores' */
  env?: Record<string, string | undefined>;
  /** the stream prefix of the test's own JetStream streams (default AGW_STREAM_PREFIX, else none) */
  prefix?: string;
  /** config values no env spelling gives (applied after loading) */
  config?: Partial<C>;
  overrides?: ServiceOverrides<O>;
  logger?: Logger;
  registry?: Registry;
}

/** Clients of a started service's gRPC services (closed before it). */
type TestClients = Record<string, { close(): void }>;

/**
 * Start a definition in this process as an integration test does: its config loaded from the process
 * environment with the local test stores as defaults (DATABASE_URL, NATS_URL, REDIS_URL), the test's stream
 * prefix, silent logs and `env` on top; the gRPC server on a free loopback port; the database migrated first.
 * The service is the one main.ts runs (`startService`), with the test's `overrides` in place; `clients` makes
 * clients of its gRPC services on their address, returned beside it and closed before it.
 */
export async function startTestService<C extends ServiceConfig, A = unknown, O extends object = object, K extends TestClients = Record<never, never>>(
  def: ServiceDefinition<C, A, O>,
  o: TestServiceOptions<C, O> & { clients?: (address: string) => K } = {},
): Promise<StartedService<C, A> & K> {
  const loaded = def.loadConfig({
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    NATS_URL: TEST_NATS_URL,
    REDIS_URL: TEST_REDIS_URL,
    AGW_STREAM_PREFIX: o.prefix ?? process.env.AGW_STREAM_PREFIX ?? '',
    LOG_LEVEL: 'silent',
    ...o.env,
  });
  const config: C = { ...loaded, grpcHost: '127.0.0.1', grpcPort: 0, ...o.config };
  if (config.databaseUrl) await migrateToLatest(config.databaseUrl);
  const started = await startService(def, { config, logger: o.logger ?? createLogger('test', 'silent'), registry: o.registry ?? createMetricsRegistry('test'), overrides: o.overrides });
  const clients = (o.clients?.(`127.0.0.1:${started.grpcPort}`) ?? {}) as K;
  return {
    ...started,
    ...clients,
    close: async () => {
      for (const c of Object.values(clients)) c.close();
      await started.close();
    },
  };
}

/** The process of one service: `startService` with the ops server, SIGTERM/SIGINT as its shutdown, exit codes. */
export function runService<C extends ServiceConfig, A = unknown, O extends object = object>(def: ServiceDefinition<C, A, O>): void {
  let config: C;
  try {
    config = def.loadConfig();
  } catch (e) {
    process.stderr.write(`${def.name} failed to start: ${(e as Error).message}\n`);
    process.exit(1);
  }
  const logger = createLogger(def.name, config.logLevel as Parameters<typeof createLogger>[1]);
  let started: StartedService<C, A> | undefined;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${def.name} stopping`);
    await started?.close();
    await traceHooks.current?.shutdown().catch(() => undefined); // export the spans still buffered
    logger.info(`${def.name} stopped`);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  void (async () => {
    try {
      started = await startService(def, { config, logger, ops: true, closeOnFailure: false });
    } catch (e) {
      logger.fatal({ err: e }, `${def.name} failed to start: ${describeStartError(e)}`);
      process.exit(1);
    }
  })();
}

/** A readable cause for the usual start-up failures. */
export function describeStartError(e: unknown): string {
  const err = e as { code?: string; message?: string; address?: string; port?: number };
  if (err?.code === 'ECONNREFUSED') return `connection refused at ${err.address ?? '?'}:${err.port ?? '?'}`;
  if (err?.code === 'EADDRINUSE') return `port ${err.port ?? ''} is already in use`;
  return err?.message ?? String(e);
}
