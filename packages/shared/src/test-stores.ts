/**
 * The stores an integration test uses: the local test Postgres (migrated), NATS and Redis, each from its
 * environment variable (DATABASE_URL, NATS_URL, REDIS_URL) or the local default. A test's bus has a stream
 * prefix of its own; `closeTestBus` removes that prefix's streams before it closes the connection.
 */
import { type Bus, connectBus } from './bus/bus';
import { streams } from './bus/events';
import { sql } from 'kysely';
import { type Db, createDb } from './db/database';
import { migrateToLatest } from './db/migrate';

export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
export const TEST_NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** A pool on the test database, migrated to the latest schema first. */
export async function openTestDb(options?: Parameters<typeof createDb>[1]): Promise<Db> {
  await migrateToLatest(TEST_DATABASE_URL);
  return createDb(TEST_DATABASE_URL, options);
}

/**
 * The URL of a database of the test's own beside the test database (`<test database>_<suffix>`), created
 * when missing; `fresh`: dropped and created again. For a test that changes the schema, or starts a service
 * whose replicas would take rows of the other tests (managed sessions).
 */
export async function ownTestDatabase(suffix: string, o: { fresh?: boolean } = {}): Promise<string> {
  const name = `${new URL(TEST_DATABASE_URL).pathname.slice(1)}_${suffix}`;
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a database name: ${name}`);
  const admin = createDb(TEST_DATABASE_URL, { max: 1 });
  try {
    if (o.fresh) await sql.raw(`DROP DATABASE IF EXISTS ${name}`).execute(admin);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${name}`.execute(admin);
    if (!rows[0].n) await sql.raw(`CREATE DATABASE ${name}`).execute(admin);
  } finally {
    await admin.destroy();
  }
  return Object.assign(new URL(TEST_DATABASE_URL), { pathname: `/${name}` }).toString();
}

/** Drops a database `ownTestDatabase` made. */
export async function dropOwnTestDatabase(url: string): Promise<void> {
  const admin = createDb(TEST_DATABASE_URL, { max: 1 });
  try {
    await sql.raw(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)}`).execute(admin);
  } finally {
    await admin.destroy();
  }
}

/** The test's bus on its own stream prefix (the fleet's streams are created under it). */
export function openTestBus(prefix: string, name: string): Promise<Bus> {
  return connectBus(TEST_NATS_URL, prefix, name);
}

/** Removes the streams of the bus's prefix, then closes it. */
export async function closeTestBus(bus: Bus | undefined): Promise<void> {
  if (!bus) return;
  const jsm = await bus.nc.jetstreamManager();
  for (const s of Object.values(streams(bus.prefix))) await jsm.streams.delete(s.name).catch(() => undefined);
  await bus.close();
}
