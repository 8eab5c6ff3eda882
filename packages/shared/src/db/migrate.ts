/**
 * The one migration system: kysely migrations, date-prefixed files in `migrations/`, run by
 * `pnpm migrate` (or `migrateToLatest` from tests). Creates the database first when it does not exist.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator } from 'kysely';
import { Client } from 'pg';
import { createDb } from './database';

/** CREATE DATABASE when the URL's database is missing (local and test convenience; production pre-creates it). */
export async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`database name "${name}" must be [A-Za-z0-9_]+`);
  u.pathname = '/postgres';
  const client = new Client({ connectionString: u.toString() });
  await client.connect();
  try {
    const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } catch (e) {
        // a concurrent creator won the race
        if ((e as { code?: string }).code !== '42P04' && (e as { code?: string }).code !== '23505') throw e;
      }
    }
  } finally {
    await client.end();
  }
}

export async function migrateToLatest(url: string): Promise<string[]> {
  await ensureDatabase(url);
  const db = createDb(url, { max: 2 });
  try {
    const migrator = new Migrator({
      db,
      provider: new FileMigrationProvider({ fs, path, migrationFolder: path.join(__dirname, 'migrations') }),
      allowUnorderedMigrations: true,
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  } finally {
    await db.destroy();
  }
}
