/**
 * The SQL functions of a migrated database are the registered ones (db/functions): each body byte for byte,
 * its arguments, result and language; a definition changed in code without a migration (or a function changed
 * by hand) is reported by `functionDrift`. No function but a registered one writes audit records. Every field of
 * the record is a column of audit_records of its kind's SQL type, and a field's migration (`addRecordColumns`)
 * leaves the table and the functions as registered.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { type Db, createDb } from '../src/db/database';
import { addRecordColumns, applyFunctions, functionDrift, recordColumnTypes, registerFunction, sqlFunctions } from '../src/db/functions';
import { migrateToLatest } from '../src/db/migrate';
import { dropOwnTestDatabase, openTestDb, ownTestDatabase } from '../src/test-stores';

let db: Db;

beforeAll(async () => {
  db = await openTestDb({ max: 2 });
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

/** The name Postgres gives each SQL type of `recordColumnTypes` in information_schema (udt_name). */
const udtName: Record<string, string> = { text: 'text', jsonb: 'jsonb', boolean: 'bool', timestamptz: 'timestamptz', uuid: 'uuid' };

async function columnsOf(d: Db): Promise<Map<string, { type: string; nullable: boolean }>> {
  const { rows } = await sql<{ name: string; type: string; nullable: string }>`
    SELECT column_name AS name, udt_name AS type, is_nullable AS nullable FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'audit_records'`.execute(d);
  return new Map(rows.map((r) => [r.name, { type: r.type, nullable: r.nullable === 'YES' }]));
}

it('every field of the record is a column of audit_records, of its kind\'s SQL type', async () => {
  const columns = await columnsOf(db);
  for (const [field, type] of recordColumnTypes) expect([field, columns.get(field)?.type]).toEqual([field, udtName[type]]);
});

it('a field\'s migration adds its column, NULL in older records, and re-applies the functions', async () => {
  // a database of its own: the field's column is dropped there and added back as a migration would add it
  const scratchUrl = await ownTestDatabase('addcol', { fresh: true });
  await migrateToLatest(scratchUrl);
  const scratch = createDb(scratchUrl, { max: 1 });
  try {
    await sql`ALTER TABLE audit_records DROP COLUMN session_id`.execute(scratch);
    expect((await columnsOf(scratch)).has('session_id')).toBe(false);
    await addRecordColumns(scratch as never, ['session_id']);
    expect((await columnsOf(scratch)).get('session_id')).toEqual({ type: 'text', nullable: true });
    expect(await functionDrift(scratch, sqlFunctions)).toEqual([]);
    await expect(addRecordColumns(scratch as never, ['no_such_field' as never])).rejects.toThrow(/not a field of the record/);
  } finally {
    await scratch.destroy();
    await dropOwnTestDatabase(scratchUrl);
  }
}, 60_000);
