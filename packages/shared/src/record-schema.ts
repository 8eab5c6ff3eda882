/**
 * The record's fields as zod schemas, made from their kinds (`recordFieldKinds` in action-record.ts): one
 * function maps each kind to its schema. The API's `AuditRecord` (the gateway's OpenAPI document) and the
 * decision event (bus/events.ts) take their record fields from here, so a field added to the record's
 * message is in both with no edit (the event: when `recordFieldsInEvent` says it carries it).
 */
import { z } from 'zod';
import { type ActionRecordField, type RecordFieldKind, type RecordFieldKinds, actionRecordFieldKinds, recordFieldNotes } from './action-record';

/** The schema of a record field of each kind (a time as the API writes it: ISO 8601). */
const schemaOfKind = {
  text: () => z.string(),
  nullable: () => z.string().nullable(),
  list: () => z.array(z.string()),
  object: () => z.record(z.string(), z.unknown()),
  bool: () => z.boolean(),
  time: () => z.string().meta({ description: 'ISO 8601 timestamp' }),
} satisfies Record<RecordFieldKind, () => z.ZodType>;
type SchemaOfKind = { [K in RecordFieldKind]: ReturnType<(typeof schemaOfKind)[K]> };

/** The schema of each field of the record, by the field's name in the record. */
export type RecordShape = { [F in ActionRecordField]: SchemaOfKind[RecordFieldKinds[F]] };

/**
 * The schemas of the record's fields `fields` (every field when left out), in the message's order, each
 * typed by its kind and described by its note (`recordFieldNotes`): the shape to spread into a `z.object`.
 */
export function recordShape(): RecordShape;
export function recordShape<F extends ActionRecordField>(fields: readonly F[]): Pick<RecordShape, F>;
export function recordShape(fields?: readonly ActionRecordField[]): Partial<RecordShape> {
  const wanted = fields && new Set<string>(fields);
  const shape: Record<string, z.ZodType> = {};
  for (const [field, kind] of actionRecordFieldKinds) {
    if (wanted && !wanted.has(field)) continue;
    const note = recordFieldNotes[field];
    shape[field] = note ? schemaOfKind[kind]().meta({ description: note }) : schemaOfKind[kind]();
  }
  return shape as Partial<RecordShape>;
}
