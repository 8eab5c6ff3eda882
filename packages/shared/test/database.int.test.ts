/**
 * A Postgres connection reset while a client is checked out (mid-query) must fail that query, not crash
 * the process with an unhandled 'error' event on the pg Client; the pool then reconnects.
 * (Found by the fault suite, test/faults R2: a cut of every Postgres connection killed four services.)
 * A wait for a connection is bounded: a pool with every connection held answers errors, not silence.
 */
import { sql } from 'kysely';
import { DEFAULT_ACQUIRE_TIMEOUT_MS } from '../src/config';
import { createDb, poolOf, preparedQuery } from '../src/db/database';
import { unreachableStore } from '../src/errors';
import { postgresProxy } from './support/postgres-proxy';
import { TEST_DATABASE_URL } from '../src/test-stores';

const target = new URL(TEST_DATABASE_URL);

test('a connection reset during a query fails the query and the next query works', async () => {
  const proxy = await postgresProxy(target);
  const db = createDb(proxy.url, { max: 2 });
  try {
    const slow = sql`SELECT pg_sleep(5)`.execute(db);
    await new Promise((r) => setTimeout(r, 300));
    proxy.cut();
    await expect(slow).rejects.toThrow();
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
    expect(rows[0].one).toBe(1);
  } finally {
    await db.destroy();
    proxy.close();
  }
});

test('a prepared statement is parsed once per connection and answers like the same query unprepared', async () => {
  const db = createDb(target.toString(), { max: 1 });
  try {
    const text = 'SELECT $1::int + 1 AS n';
    expect(await preparedQuery<{ n: number }>(db, 'plus_one', text, [1])).toEqual([{ n: 2 }]);
    expect(await preparedQuery<{ n: number }>(db, 'plus_one', text, [41])).toEqual([{ n: 42 }]);
    // one connection (max 1): the statement stays prepared on it, once
    const { rows } = await sql<{ name: string; calls: number }>`SELECT name, generic_plans + custom_plans AS calls FROM pg_prepared_statements`.execute(db);
    expect(rows).toEqual([{ name: 'plus_one', calls: 2 }]);
  } finally {
    await db.destroy();
  }
});

test('a pool with every connection held fails a waiting statement as Postgres unavailable after acquireTimeoutMs, then heals', async () => {
  // the shape of the audit pool's deadlock (docs/reliability.md): a transaction holds the only connection
  // and awaits a statement that needs another one from the same pool
  const db = createDb(target.toString(), { max: 1, acquireTimeoutMs: 300 });
  try {
    const t0 = performance.now();
    let inner: unknown;
    const outer = db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      try {
        await sql`SELECT 2`.execute(db); // not through trx: waits for a second connection
      } catch (e) {
        inner = e;
        throw e;
      }
    });
    await expect(outer).rejects.toThrow(/timeout exceeded when trying to connect/);
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(5_000);
    expect(unreachableStore(inner)).toBe('Postgres');
    // the transaction rolled back and gave its connection back: the pool answers again
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(db);
    expect(rows[0].one).toBe(1);
  } finally {
    await db.destroy();
  }
});

test('the default wait for a connection is bounded (DEFAULT_ACQUIRE_TIMEOUT_MS)', () => {
  const db = createDb(target.toString());
  try {
    expect((poolOf(db) as unknown as { options: { connectionTimeoutMillis: number } }).options.connectionTimeoutMillis).toBe(DEFAULT_ACQUIRE_TIMEOUT_MS);
    expect(DEFAULT_ACQUIRE_TIMEOUT_MS).toBeGreaterThan(0);
  } finally {
    void db.destroy();
  }
});
