/**
 * The action record: the one field list of what the fleet records about an action (governed, observed or
 * control-plane), and the only mappers between its forms:
 * - `ActionRecord` (snake_case, the DB columns and the public names);
 * - the gRPC `AuditEntry` message (`toAuditEntry` / `fromAuditEntry`), what gateway and managed send to
 *   the audit service and what it sends back;
 * - the hashed content (`hashedContent`): every field, whose RFC 8785 canonical JSON is hashed into the
 *   chain (the exact bytes: docs/audit.md); a field added to a written chain is hashed only when set
 *   (`recordFieldsHashedWhenSet`), so older records keep their bytes;
 * - the public JSON of a stored record (`presentStoredRecord`): GET /api/audit/log and the compliance export;
 * - the decision event of a record (`decisionEventOf`), as the bus carries it.
 * A record is built by the builders of its kind (record-builders.ts: governed, observed, control-plane, a
 * human's decision), never written out by hand.
 * It lives in @agw/shared (which depends on the @agw/proto contracts) because every service needs it and
 * the proto package holds only generated code and its index.
 */
import type { audit } from '@agw/proto';
import type { DecisionEvent, DecisionKind } from './bus/events';
import { canonicalJson, sha256Hex } from './canonical';
import { type Json, type JsonField, jsonOf, toJson } from './json-text';
import { traceHooks } from './tracing/hooks';

/**
 * How the record holds each field of its message (agw.audit.v1.AuditEntry in packages/proto/proto/agw/audit.proto,
 * the one definition of the record's fields). Exhaustive over the message: a field added there fails the build
 * here until it is given a kind; then, with no other edit, it is in `ActionRecord`, the hashed content, the
 * gRPC mappers, the audit service's reads and appends (audit-record.repository.ts selects and sends
 * `actionRecordFields`), and the API's record (the gateway's auditRecordSchema is made from these kinds, with
 * `recordFieldNotes` as descriptions). The compiler then asks for the column (db/tables/audit.ts) and for the
 * decision event's choice (`recordFieldsInEvent`). The append functions' insert is made from this list too
 * (db/functions/record-columns.ts), so the column's migration only re-applies them (`applyFunctions`).
 * - `text`: a string; `nullable`: a string or null (empty on the wire); `list`: strings;
 * - `object`: a JSON object (an agw.common.v1.Json message on the wire, by the one codec json-text.ts);
 * - `bool`; `time`: ISO 8601 UTC with milliseconds, e.g. 2026-11-21T23:59:59.123Z (a timestamptz column).
 */
export const recordFieldKinds = {
  action_id: 'text',
  agent_id: 'text',
  agent_type: 'text',
  agent_version: 'text',
  tool: 'text',
  method: 'text',
  params: 'object',
  decision: 'text',
  violations: 'list',
  severity: 'text',
  alert_tier: 'nullable',
  requires_human: 'bool',
  execution_mode: 'nullable',
  source: 'text',
  session_id: 'nullable',
  bundle_revision: 'text',
  details: 'object',
  requested_at: 'time',
} as const satisfies Record<EntryField, RecordFieldKind>;

export type RecordFieldKind = 'text' | 'nullable' | 'list' | 'object' | 'bool' | 'time';
/**
 * The previous release's form of the record's object fields (`params_json`, `details_json`: JSON text), in the
 * message for one release beside them (docs/architecture.md, "Changing a contract"): written and read by the
 * mappers below, never a field of the record.
 */
type PreviousReleaseField = `${ObjectField}_json`;
type ObjectField = 'params' | 'details';
/** The message's fields that are the record's. */
type EntryField = Exclude<keyof audit.AuditEntry, PreviousReleaseField>;
export type RecordFieldKinds = typeof recordFieldKinds;
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The name of a field of the record: the message's field, the column and the API use the same names. */
export type ActionRecordField = keyof RecordFieldKinds;
/** The value of a field of each kind in the record. */
export interface RecordFieldValues {
  text: string;
  nullable: string | null;
  list: string[];
  object: Record<string, unknown>;
  bool: boolean;
  time: string;
}

/** The record: every field of its message, by its kind (`recordFieldKinds`). */
export type ActionRecord = { [K in ActionRecordField]: RecordFieldValues[RecordFieldKinds[K]] };

/** The names of the record's fields, in the message's order: what is hashed (every one of them). */
export const actionRecordFields: readonly ActionRecordField[] = Object.keys(recordFieldKinds) as ActionRecordField[];

/** Each field of the record (its name in the record, the column and the API) with its kind, in the message's order. */
export const actionRecordFieldKinds: ReadonlyArray<readonly [ActionRecordField, RecordFieldKind]> = Object.entries(recordFieldKinds) as [ActionRecordField, RecordFieldKind][];

/**
 * What a field means, where its name and kind do not say it all: the API's description of the field (the
 * gateway's OpenAPI record). A field without a note is described by its name.
 */
export const recordFieldNotes: Partial<Record<ActionRecordField, string>> = {
  params: 'personal data as an encrypted envelope {"$pii": …}',
  decision: 'allow | deny | requires_human | observed (control_plane records: approved, rejected, …)',
  source: 'mcp_governed | mcp_observed | control_plane',
};

/** The record's fields of `r` and nothing else (an object that may carry more, e.g. a stored row, as the bare record). */
export function recordFieldsOf(r: ActionRecord): ActionRecord {
  const out: Record<string, unknown> = {};
  for (const k of actionRecordFields) out[k] = r[k];
  return out as ActionRecord;
}

/** The fields of kind `nullable` (a string or null): the only kind a field added to a written chain may have. */
type NullableField = { [K in ActionRecordField]: RecordFieldKinds[K] extends 'nullable' ? K : never }[ActionRecordField];

/**
 * The fields added to the record after chains were written with it (none yet; docs/audit.md, "Adding a hashed
 * field"). Such a field is hashed only when it holds a value: while it is null its key is left out of the hashed
 * content, so a record written before the field existed (its column NULL) hashes the bytes it was written with,
 * and no chain version is needed. A field listed here is `nullable` (null until set), and the offline verifier
 * lists it in `HASHED_WHEN_SET_KEYS` (services/audit/src/chain/record-hash.test.ts fails until it does). The 18
 * fields chains were first written with are always hashed, null or not.
 */
export const recordFieldsHashedWhenSet: readonly NullableField[] = [];

/**
 * The hashed content of a record made of `fields`, where each of `whenSet` is left out while null: the one rule
 * of what is hashed, here for the record's own lists (`hashedContent`) and, in tests, for a record with a field
 * added to it.
 */
export function hashedContentOf(fields: readonly string[], whenSet: ReadonlySet<string>): (r: ActionRecord) => Record<string, unknown> {
  return (r) => {
    const out: Record<string, unknown> = {};
    for (const k of fields) {
      const v = (r as unknown as Record<string, unknown>)[k];
      if (v === null && whenSet.has(k)) continue;
      out[k] = v;
    }
    return out;
  };
}

/**
 * The object whose canonical JSON is hashed: every field of the record (JCS orders the keys), but a field of
 * `recordFieldsHashedWhenSet` only when it is not null.
 */
export const hashedContent: (r: ActionRecord) => Record<string, unknown> = hashedContentOf(actionRecordFields, new Set(recordFieldsHashedWhenSet));

/**
 * What binds a human decision on a queued action to the exact call (docs/auth.md, "Approvals"): carried in
 * `details.approval_binding` of the `control_plane` records of a decision (approved, rejected, expired) and
 * of the agent's retry of an approved action. The record's 18 hashed fields are unchanged: records of other
 * kinds hash the same bytes as before; this only adds a key inside `details` of these records.
 */
export interface ApprovalBinding {
  /** `paramsSha256` of the params the agent sent when the action was queued */
  params_sha256: string;
  /** the policy bundle revision the queued action was evaluated under */
  evaluated_bundle_revision: string;
  /** the tenant's policy bundle revision in force when the human decided (or the action expired) */
  bundle_revision: string;
}

/**
 * SHA-256 (hex) of the RFC 8785 canonical JSON of a call's params, as the agent sent them (before PII
 * encryption): key order and whitespace do not matter, any other change of a value does.
 */
export function paramsSha256(params: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(params));
}

/**
 * The record id a tenant sees (API answers, exports, events): the record's 1-based position in the tenant's
 * own chain, `tenant_seq + 1`, so a tenant's first record is 1 whatever other tenants do. The global row key
 * (`audit_records.id`, one sequence for every tenant) never leaves the audit service (docs/audit.md,
 * "Record ids"). Not hashed: the chain's bytes do not depend on it.
 */
export function recordIdOf(tenantSeq: number): number {
  return tenantSeq + 1;
}

/**
 * A stored record as the public API and the compliance export show it: id (`recordIdOf(tenant_seq)`),
 * `extra`, the fields, the hashes.
 */
export function presentStoredRecord(r: ActionRecord & { tenant_seq: number; prev_hash: string; record_hash: string }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: recordIdOf(r.tenant_seq), ...extra, ...recordFieldsOf(r), prev_hash: r.prev_hash, record_hash: r.record_hash };
}

/** A field's value of each kind in the gRPC message: an object as a Json message, null as the empty string. */
interface RecordFieldWireValues {
  text: string;
  nullable: string;
  list: string[];
  object: Json | undefined;
  bool: boolean;
  time: string;
}
// each kind's wire value is the message's type of its fields (a field given the wrong kind fails the build here)
const kindsMatchTheMessage: SameType<{ [K in keyof RecordFieldKinds]: RecordFieldWireValues[RecordFieldKinds[K]] }, Omit<audit.AuditEntry, PreviousReleaseField>> = true;
const objectFieldsAreTheRecords: SameType<ObjectField, { [K in ActionRecordField]: RecordFieldKinds[K] extends 'object' ? K : never }[ActionRecordField]> = true;
void objectFieldsAreTheRecords;
void kindsMatchTheMessage;

/** The record's object fields, in the message's order. */
const objectFields = actionRecordFieldKinds.filter(([, kind]) => kind === 'object').map(([field]) => field);

/**
 * The record as the gRPC message carries it: every field under its own name, by its kind (JSON objects as
 * Json messages by the one codec of free-form content, json-text.ts; nulls as empty strings). `params`:
 * toJson(r.params), when the caller already made it (the gateway makes it once per call). Each object field has
 * the previous release's `<name>_json` text beside it, for one release (docs/architecture.md, "Changing a contract").
 */
export function toAuditEntry(r: ActionRecord, params?: Json): audit.AuditEntry {
  const e: Record<string, unknown> = {};
  for (const [field, kind] of actionRecordFieldKinds) {
    const v = r[field];
    e[field] = kind === 'object' ? (field === 'params' && params !== undefined ? params : toJson(v)) : kind === 'nullable' ? (v ?? '') : v;
  }
  // the previous release's form, after the record's fields as in the message
  for (const field of objectFields) e[`${field}_json`] = (e[field] as Json | undefined)?.text ?? '';
  return e as unknown as audit.AuditEntry;
}

/**
 * The record from its gRPC message, by each field's kind. `parseObject` turns a Json field into an object
 * (the caller decides what a malformed one is: a 422 for a request, a fallback for a stored record); a time
 * is normalised to ISO 8601 UTC with milliseconds (now when empty).
 */
export function fromAuditEntry(e: audit.AuditEntry, parseObject: (json: Json | undefined, field: ActionRecordField) => Record<string, unknown>): ActionRecord {
  const m = e as unknown as Record<string, unknown>;
  const r: Record<string, unknown> = {};
  for (const [field, kind] of actionRecordFieldKinds) {
    const v = m[field];
    r[field] =
      kind === 'object'
        ? parseObject(jsonOf(m as Partial<JsonField<typeof field>>, field), field)
        : kind === 'nullable'
          ? (v as string) || null
          : kind === 'time'
            ? (v ? new Date(v as string) : new Date()).toISOString()
            : v;
  }
  return r as ActionRecord;
}

/**
 * The decision event of a record (without `record_id` / `record_hash`, which the append adds once the
 * record has them in its transaction).
 */
export function decisionEventOf(eventId: string, kind: DecisionKind, tenantId: string, r: ActionRecord): Omit<DecisionEvent, 'record_id' | 'record_hash'> {
  // tracing on: the event's publish (batched later, off the caller's path) continues the caller's trace
  traceHooks.current?.remember(eventId);
  const e: Record<string, unknown> = { event_id: eventId, kind, tenant_id: tenantId };
  for (const f of decisionEventFields) e[f] = r[f];
  if (kind === 'policy') e.details = r.details;
  return e as Omit<DecisionEvent, 'record_id' | 'record_hash'>;
}

/**
 * Which fields of the record its decision event carries (`policy`: with kind `policy` only). Exhaustive: a field
 * added to the message is decided here; the event's schema (bus/events.ts) and `decisionEventOf` then carry
 * the fields marked true, with the record's types (record-schema.ts).
 */
export const recordFieldsInEvent = {
  action_id: true,
  agent_id: true,
  agent_type: true,
  agent_version: false,
  tool: true,
  method: true,
  params: false,
  decision: true,
  violations: true,
  severity: true,
  alert_tier: true,
  requires_human: true,
  execution_mode: false,
  source: true,
  session_id: true,
  bundle_revision: false,
  details: 'policy',
  requested_at: true,
} as const satisfies Record<ActionRecordField, boolean | 'policy'>;
/** The record's fields every decision event carries. */
export type DecisionEventField = { [K in ActionRecordField]: (typeof recordFieldsInEvent)[K] extends true ? K : never }[ActionRecordField];
/** The record's fields every decision event carries, in the message's order (its schema: bus/events.ts). */
export const decisionEventFields = actionRecordFields.filter((f) => recordFieldsInEvent[f] === true) as DecisionEventField[];
const eventCarriesTheRecordsFields: SameType<Pick<DecisionEvent, DecisionEventField>, Pick<ActionRecord, DecisionEventField>> = true;
void eventCarriesTheRecordsFields;
