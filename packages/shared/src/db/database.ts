/**
 * Postgres through kysely + pg: one pool per process, one `Database` type for the whole schema.
 * Tables are owned by the service named in their file under `tables/`; every repository method takes the
 * tenant id first and filters on it.
 */
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import { Pool, types } from 'pg';
import { DEFAULT_ACQUIRE_TIMEOUT_MS } from '../config';
import { tagStore } from '../errors';
import { countPostgresRequest } from '../store-requests';
import type { Database } from './schema';

export type { Database };
export type Db = Kysely<Database>;
/** The pool, or a transaction's connection: a repository's read inside a caller's transaction goes through it. */
export type Conn = Db | Transaction<Database>;

// BIGINT / BIGSERIAL columns come back as JS numbers (ids stay far below 2^53); NUMERIC stays a string.
types.setTypeParser(20, (v) => Number(v));

/** The pg pool behind each database handle createDb made (for what kysely cannot express: copy-rows.ts). */
const pools = new WeakMap<Db, Pool>();

/** The pool of a handle made by createDb. */
export function poolOf(db: Db): Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('not a database handle made by createDb');
  return pool;
}

/**
 * A statement of the hot path, prepared once per connection under `name`: Postgres parses it on a
 * connection's first use, then only binds and executes it (an unnamed statement, as kysely sends them, is
 * parsed and planned again each time: 40-90 µs of the backend's 350-490 µs for a lone chain append here,
 * docs/history/performance-2026.md). `name` must be unique per statement text. Errors are named and requests counted as
 * for every query of a pool made by createDb.
 */
export async function preparedQuery<R extends object>(db: Db, name: string, text: string, values: unknown[]): Promise<R[]> {
  const client = await poolOf(db).connect();
  try {
    return (await client.query<R>({ name, text, values })).rows;
  } finally {
    client.release();
  }
}

/**
 * `max`: most connections. `acquireTimeoutMs`: the longest a statement waits for one, whether the pool is
 * full or a new connection is not answered (pg's `connectionTimeoutMillis`; 0 waits forever; default DB_POOL_ACQUIRE_TIMEOUT_MS's). A wait that
 * runs out fails as Postgres unavailable (`unreachableStore`), so a pool that can no longer hand out a
 * connection (every one held, e.g. by transactions that each wait for one more) answers errors and heals
 * when their transactions roll back, instead of hanging every caller for good.
 */
export function createDb(url: string, options: { max?: number; acquireTimeoutMs?: number } = {}): Db {
  const pool = new Pool({ connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor a checked-out client's: pg-pool listens only while a client is idle, and a connection reset during
  // a query or transaction is emitted on the client as well as failing the query (which the caller sees);
  // the broken client is dropped when it is released. Found by the fault suite (test/faults, R2).
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    // a socket error of a query (ECONNRESET mid-query) is named as Postgres too; each query is counted
    // (store-requests.ts)
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      countPostgresRequest();
      const r = query(...a);
      return r instanceof Promise ? r.catch((e: unknown) => Promise.reject(tagStore(e, 'Postgres'))) : r;
    };
  });
  // a refused or failed connect is named as Postgres (unreachableStore: a 503, or UNAVAILABLE over gRPC)
  const connect = pool.connect.bind(pool) as () => Promise<unknown>;
  (pool as unknown as { connect: (cb?: unknown) => unknown }).connect = (cb?: unknown) =>
    cb ? (pool.constructor.prototype.connect as (cb: unknown) => unknown).call(pool, cb) : connect().catch((e: unknown) => Promise.reject(tagStore(e, 'Postgres')));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}
