/**
 * The SQL functions of a migrated database are the registered ones (db/functions): each body byte for byte,
 * its arguments, result and language; a definition changed in code without a migration (or a function changed
 * by hand) is reported by `functionDrift`. No function but a registered one writes audit records.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { type Db, createDb } from '../src/db/database';
import { applyFunctions, functionDrift, registerFunction, sqlFunctions } from '../src/db/functions';
import { migrateToLatest } from '../src/db/migrate';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
let db: Db;

beforeAll(async () => {
  await migrateToLatest(url);
  db = createDb(url, { max: 2 });
});
afterAll(() => db.destroy());

it('a migrated database holds every registered function as registered', async () => {
  expect(sqlFunctions.map((f) => f.name)).toEqual(['audit_append_one', 'audit_append_batch']);
  expect(await functionDrift(db, sqlFunctions)).toEqual([]);
});

it('only registered functions write audit records', async () => {
  const { rows } = await sql<{ name: string }>`
    SELECT DISTINCT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = current_schema() AND p.prosrc ILIKE '%INSERT INTO audit_records%' ORDER BY 1`.execute(db);
  expect(rows.map((r) => r.name)).toEqual(sqlFunctions.map((f) => f.name).sort());
});

it('reports a function whose body, result or presence differs from its registration', async () => {
  const name = `agw_test_probe_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const probe = registerFunction({ name, arguments: 'a integer', returns: 'integer', language: 'sql', body: '\n  SELECT a + 1\n' });
  expect(await functionDrift(db, [probe])).toEqual([{ name, differs: 'missing', registered: 'a integer', database: '' }]);
  await applyFunctions(db, [probe]);
  try {
    expect(await functionDrift(db, [probe])).toEqual([]);
    // the body changed in code (one space), the database not migrated
    expect(await functionDrift(db, [{ ...probe, body: '\n  SELECT a + 1 \n' }])).toEqual([{ name, differs: 'body', registered: '\n  SELECT a + 1 \n', database: '\n  SELECT a + 1\n' }]);
    expect(await functionDrift(db, [{ ...probe, returns: 'bigint' }])).toMatchObject([{ name, differs: 'returns', database: 'integer' }]);
    expect(await functionDrift(db, [{ ...probe, arguments: 'a bigint' }])).toMatchObject([{ name, differs: 'arguments', database: 'a integer' }]);
  } finally {
    await sql.raw(`DROP FUNCTION IF EXISTS ${name}(integer)`).execute(db);
  }
});

it('refuses a name or a body it cannot apply safely', () => {
  expect(() => registerFunction({ name: 'Bad-Name', arguments: '', returns: 'integer', language: 'sql', body: 'SELECT 1' })).toThrow(/identifier/);
  expect(() => registerFunction({ name: 'quoted', arguments: '', returns: 'integer', language: 'sql', body: 'SELECT $fn$x$fn$' })).toThrow(/\$fn\$/);
});
