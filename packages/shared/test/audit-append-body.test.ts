/**
 * The registered append functions' bodies, byte for byte: test/fixtures/<name>.body.sql holds the text Postgres
 * keeps (`pg_proc.prosrc`) for each, as migration 0042 applied it. The column list of audit_records and each
 * column's value are made from the record's field list (action-record.ts); this pins that they make the bodies
 * the database already holds, so no migration is due. A field added to the record changes both bodies: the
 * same change re-applies them in a new migration and writes the new text here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sqlFunctions } from '../src/db/functions';

const applied = (name: string) => readFileSync(join(__dirname, 'fixtures', `${name}.body.sql`), 'utf8');

it.each(sqlFunctions.map((f) => [f.name, f] as const))('%s: the registered body is the applied one, byte for byte', (name, fn) => {
  expect(fn.body).toBe(applied(name));
});
