/**
 * The migration of a field added to the record (docs/architecture.md, "Adding a field to the record"): its
 * column in audit_records, of its kind's SQL type (`recordColumnTypes`), NULL for every record written before
 * it; then the registered functions again, whose insert now names the column (record-columns.ts). A migration
 * calls it with the new fields' names, once.
 */
import { type Kysely, sql } from 'kysely';
import type { ActionRecordField } from '../../action-record';
import { auditAppendBatch, auditAppendOne } from './audit-append.sql';
import { recordColumnTypes } from './record-columns';
import { applyFunctions } from './sql-function';

export async function addRecordColumns(db: Kysely<unknown>, fields: readonly ActionRecordField[]): Promise<void> {
  for (const field of fields) {
    const type = recordColumnTypes.find(([f]) => f === field)?.[1];
    if (!type) throw new Error(`${field} is not a field of the record (action-record.ts)`);
    await sql`ALTER TABLE audit_records ADD COLUMN ${sql.id(field)} ${sql.raw(type)}`.execute(db);
  }
  await applyFunctions(db, [auditAppendOne, auditAppendBatch]);
}
