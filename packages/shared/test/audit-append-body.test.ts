/**
 * The registered append functions' bodies, byte for byte: test/fixtures/<name>.body.sql holds the text Postgres
 * keeps (`pg_proc.prosrc`) for each, as migration 0042 applied it. The column list of audit_records and each
 * column's value are made from the record's field list (action-record.ts); this pins that they make the bodies
 * the database already holds, so no migration is due. A field added to the record changes both bodies: the
 * same change re-applies them in a new migration and writes the new text here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionRecordFieldKinds, actionRecordFields } from '../src/action-record';
import { sqlFunctions } from '../src/db/functions';
import { recordColumnValues, recordColumns, wrapSqlList } from '../src/db/functions/record-columns';

const applied = (name: string) => readFileSync(join(__dirname, 'fixtures', `${name}.body.sql`), 'utf8');

it.each(sqlFunctions.map((f) => [f.name, f] as const))('%s: the registered body is the applied one, byte for byte', (name, fn) => {
  expect(fn.body).toBe(applied(name));
});

describe('the insert into audit_records is made from the record field list', () => {
  it('lists every field of the record as a column, in the message order', () => {
    expect(recordColumns).toEqual(actionRecordFields);
  });

  it('takes each column from the entry by its kind (action_id cast to its uuid column)', () => {
    expect(recordColumnValues('p')).toEqual(
      actionRecordFieldKinds.map(([f, kind]) =>
        f === 'action_id'
          ? "(p->>'action_id')::uuid"
          : ({ text: `p->>'${f}'`, nullable: `p->>'${f}'`, list: `p->'${f}'`, object: `p->'${f}'`, bool: `(p->>'${f}')::boolean`, time: `(p->>'${f}')::timestamptz` } as const)[kind],
      ),
    );
    for (const fn of sqlFunctions) {
      for (const v of recordColumnValues(fn.name === 'audit_append_one' ? 'p' : 'x.e')) expect(fn.body).toContain(v);
    }
  });

  it('wraps a list greedily within its width, the comma counted', () => {
    expect(wrapSqlList(['a', 'bb', 'cc', 'd'], { first: 'SELECT ', indent: '  ', width: 14 })).toBe('SELECT a, bb,\n  cc, d');
    expect(wrapSqlList(['a', 'bb', 'cc', 'd'], { first: 'SELECT ', indent: '  ', width: 13 })).toBe('SELECT a, bb,\n  cc, d');
    expect(wrapSqlList(['a', 'bb', 'cc', 'd'], { first: 'SELECT ', indent: '  ', width: 12 })).toBe('SELECT a,\n  bb, cc, d');
    expect(wrapSqlList(['a-very-long-item', 'b'], { first: '', indent: '', width: 4 })).toBe('a-very-long-item,\nb');
  });
});
