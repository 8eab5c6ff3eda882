/**
 * A Postgres connection reset while a client is checked out (mid-query) must fail that query, not crash
 * the process with an unhandled 'error' event on the pg Client; the pool then reconnects.
 * (Found by the fault suite, test/faults R2: a cut of every Postgres connection killed four services.)
 */
import net from 'node:net';
import { sql } from 'kysely';
import { createDb, preparedQuery } from '../src/db/database';

const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test');

test('a connection reset during a query fails the query and the next query works', async () => {
  const open = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
      a.pipe(b);
    }
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const url = new URL(target.toString());
  url.hostname = '127.0.0.1';
  url.port = String((proxy.address() as net.AddressInfo).port);
  const db = createDb(url.toString(), { max: 2 });
  try {
    const slow = sql`SELECT pg_sleep(5)`.execute(db);
    await new Promise((r) => setTimeout(r, 300));
    for (const s of open) s.resetAndDestroy();
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
