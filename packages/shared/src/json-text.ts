/**
 * The one codec of the free-form `*_json` fields of the gRPC contracts (the list: packages/proto/proto/agw/common.proto):
 * a tool's params and results, custom policy config, MCP tool definitions, metadata, ... Every read and write
 * of such a field goes through these functions: written one way (`jsonText`: JSON.stringify, '' for no value,
 * as proto3 has no unset string), read with a precise error naming the field (`json_invalid`, `object_type`)
 * instead of a raw JSON.parse exception: invalid_input for a field of a request (`fromJsonText`), an internal
 * error for a field of a peer's answer (`fromAnswerJsonText`), which the client did not send.
 * Structured content has messages of its own, not JSON text (error-detail.ts, sealed-values.ts).
 */
import { AppError, InputError } from './errors';

/** A free-form value as its `*_json` field carries it: its JSON text; '' when there is no value (undefined). */
export function jsonText(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value);
}

/** What a malformed field is: the caller's invalid input in a request; in a peer's answer, the peer's fault. */
type Malformed = (field: string, msg: string, type: 'json_invalid' | 'object_type') => AppError;

/** A request's field: invalid_input (422 at the edge, INVALID_ARGUMENT over gRPC) naming the field. */
const inRequest: Malformed = (field, msg, type) => InputError.at([field], msg, type);

/**
 * A peer's answer: an internal error (500 at the edge), never the client's invalid input (the client did not
 * send the field); the log names the field, the client sees no more than that the fleet failed.
 */
const inAnswer: Malformed = (field, msg) => new AppError('internal', `a peer answered a malformed ${field}: ${msg}`, 'internal error');

function parse(text: string, field: string, empty: unknown, bad: Malformed): unknown {
  if (!text) return empty;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw bad(field, `${field} must be JSON (${(e as Error).message})`, 'json_invalid');
  }
}

function parseObject(text: string, field: string, bad: Malformed): Record<string, unknown> {
  const v = parse(text, field, {}, bad);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(field, `${field} must be a JSON object`, 'object_type');
  return v as Record<string, unknown>;
}

/** The value of a free-form `*_json` field named `field` of a request; `empty` when the field is '' (unset). */
export function fromJsonText(text: string, field: string, empty?: unknown): unknown {
  return parse(text, field, empty, inRequest);
}

/** The JSON object of a free-form `*_json` field named `field` of a request; {} when the field is '' (unset). */
export function objectFromJsonText(text: string, field: string): Record<string, unknown> {
  return parseObject(text, field, inRequest);
}

/** `fromJsonText` for a field of a peer's answer: malformed, it is an internal error. */
export function fromAnswerJsonText(text: string, field: string, empty?: unknown): unknown {
  return parse(text, field, empty, inAnswer);
}

/** `objectFromJsonText` for a field of a peer's answer: malformed, it is an internal error. */
export function objectFromAnswerJsonText(text: string, field: string): Record<string, unknown> {
  return parseObject(text, field, inAnswer);
}
