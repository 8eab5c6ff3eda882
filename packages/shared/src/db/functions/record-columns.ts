/**
 * The record's columns in the append functions' SQL, made from the record's field list (`actionRecordFieldKinds`,
 * action-record.ts: the proto AuditEntry's fields, named as the columns of audit_records): the INSERT's column
 * list and the value of each column taken from the JSON entry, by the field's kind. A field added to the record
 * is in both lists with no edit here; the bodies then change, so a new migration re-applies the functions.
 */
import { type ActionRecordField, type RecordFieldKind, actionRecordFieldKinds } from '../../action-record';

/**
 * A column's value from the entry `e` (a SQL expression of type jsonb): the JSON text of a string, the JSON
 * itself of a list or an object (jsonb columns), a cast for the other kinds.
 */
const valueByKind: Record<RecordFieldKind, (e: string, column: string) => string> = {
  text: (e, c) => `${e}->>'${c}'`,
  nullable: (e, c) => `${e}->>'${c}'`,
  list: (e, c) => `${e}->'${c}'`,
  object: (e, c) => `${e}->'${c}'`,
  bool: (e, c) => `(${e}->>'${c}')::boolean`,
  time: (e, c) => `(${e}->>'${c}')::timestamptz`,
};

/**
 * Columns whose SQL type the field's kind does not say: `action_id` is a `text` field (a string on the wire and
 * in the record) held in a `uuid` column, so its value is cast. Kept explicit: the kinds describe the record,
 * not the column types (db/tables/audit.ts types them for TypeScript only).
 */
const columnCasts: Partial<Record<ActionRecordField, string>> = { action_id: 'uuid' };

/** The SQL type of a record field's column, by the field's kind. */
const sqlTypeByKind: Record<RecordFieldKind, string> = {
  text: 'text',
  nullable: 'text',
  list: 'jsonb',
  object: 'jsonb',
  bool: 'boolean',
  time: 'timestamptz',
};

/** Each record column of audit_records with its SQL type (the kind's, or its `columnCasts` type), in the message's order. */
export const recordColumnTypes: ReadonlyArray<readonly [ActionRecordField, string]> = actionRecordFieldKinds.map(
  ([field, kind]) => [field, columnCasts[field] ?? sqlTypeByKind[kind]] as const,
);

/** The record's columns of audit_records, in the message's order. */
export const recordColumns: readonly string[] = actionRecordFieldKinds.map(([field]) => field);

/** Each record column's value from the entry `e` (a jsonb expression), in the order of `recordColumns`. */
export function recordColumnValues(e: string): string[] {
  return actionRecordFieldKinds.map(([field, kind]) => {
    const cast = columnCasts[field];
    return cast ? `(${e}->>'${field}')::${cast}` : valueByKind[kind](e, field);
  });
}

/**
 * A comma-separated list wrapped greedily: the first line starts with `first`, the next ones with `indent`; an
 * item goes on the current line while that line, with the comma that follows it, stays within `width`.
 */
export function wrapSqlList(items: readonly string[], opts: { first: string; indent: string; width: number }): string {
  const lines: string[] = [];
  let line = opts.first;
  let empty = true;
  items.forEach((item, i) => {
    const comma = i < items.length - 1 ? ',' : '';
    if (!empty && `${line} ${item}${comma}`.length > opts.width) {
      lines.push(line);
      line = opts.indent;
      empty = true;
    }
    line += `${empty ? '' : ' '}${item}${comma}`;
    empty = false;
  });
  lines.push(line);
  return lines.join('\n');
}
