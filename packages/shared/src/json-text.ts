/**
 * The one codec of the free-form content of the gRPC contracts: the `agw.common.v1.Json` message (its JSON
 * text; the fields that carry it: packages/proto/proto/agw/common.proto), a tool's params and results, custom
 * policy config, MCP tool definitions, metadata, ... Every read and write of such a field goes through these
 * functions: written one way (`toJson`: JSON.stringify; no value (undefined) leaves the field unset), read
 * with a precise error naming the field (`json_invalid`, `object_type`) instead of a raw JSON.parse
 * exception: invalid_input for a field of a request (`fromJson`), an internal error for a field of a peer's
 * answer (`fromAnswerJson`), which the client did not send. For one release a Json field has the previous
 * release's `<name>_json` text beside it (docs/architecture.md, "Changing a contract"): writers fill both
 * (`jsonField`), readers take the message, or the text when only that is set (`jsonOf`).
 * Structured content has messages of its own, not JSON text (error-detail.ts, sealed-values.ts).
 */
import type { common } from '@agw/proto';
import { AppError, InputError } from './errors';

/** A free-form value as the gRPC contracts carry it. */
export type Json = common.Json;

/** A free-form value as its field carries it: its JSON text; unset (undefined) when there is no value (undefined). */
export function toJson(value: unknown): Json | undefined {
  return value === undefined ? undefined : { text: JSON.stringify(value) };
}

/**
 * A Json field `N` and, for one release, the previous release's form beside it: `<N>_json`, its JSON text
 * ('' for no value), marked deprecated in the contract (docs/architecture.md, "Changing a contract").
 */
export type JsonField<N extends string> = { [K in N]: Json | undefined } & { [K in `${N}_json`]: string };

/**
 * The Json field `name` of `value`, and beside it the previous release's `<name>_json` text, so that a peer not
 * yet updated reads it (a rolling update): what every writer of a free-form field sends, as
 * `{ ...jsonField('params', params) }`. Removed with the text fields in the next release.
 */
export function jsonField<N extends string>(name: N, value: unknown): JsonField<N> {
  return withPreviousJson(name, toJson(value));
}

/** `jsonField` of a Json message made already (the gateway's params, made once per call). */
export function withPreviousJson<N extends string>(name: N, json: Json | undefined): JsonField<N> {
  return { [name]: json, [`${name}_json`]: json?.text ?? '' } as JsonField<N>;
}

/**
 * The Json field `name` of a message, or the previous release's `<name>_json` text when only that is set (a peer
 * not yet updated, a rolling update): what every reader of a free-form field reads, as
 * `fromJson(jsonOf(req, 'params'), 'params')`.
 */
export function jsonOf<N extends string>(message: Partial<JsonField<N>> | undefined, name: N): Json | undefined {
  const m = message as Record<string, unknown> | undefined;
  const json = m?.[name] as Json | undefined;
  if (json) return json;
  const text = m?.[`${name}_json`] as string | undefined;
  return text ? { text } : undefined;
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

/** Unset, or set with no text (an empty message), is no value: `empty`. */
function parse(json: Json | undefined, field: string, empty: unknown, bad: Malformed): unknown {
  if (!json?.text) return empty;
  try {
    return JSON.parse(json.text);
  } catch (e) {
    throw bad(field, `${field} must be JSON (${(e as Error).message})`, 'json_invalid');
  }
}

function parseObject(json: Json | undefined, field: string, bad: Malformed): Record<string, unknown> {
  const v = parse(json, field, {}, bad);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(field, `${field} must be a JSON object`, 'object_type');
  return v as Record<string, unknown>;
}

/** The value of a free-form field named `field` of a request; `empty` when the field is unset. */
export function fromJson(json: Json | undefined, field: string, empty?: unknown): unknown {
  return parse(json, field, empty, inRequest);
}

/** The JSON object of a free-form field named `field` of a request; {} when the field is unset. */
export function objectFromJson(json: Json | undefined, field: string): Record<string, unknown> {
  return parseObject(json, field, inRequest);
}

/** `fromJson` for a field of a peer's answer: malformed, it is an internal error. */
export function fromAnswerJson(json: Json | undefined, field: string, empty?: unknown): unknown {
  return parse(json, field, empty, inAnswer);
}

/** `objectFromJson` for a field of a peer's answer: malformed, it is an internal error. */
export function objectFromAnswerJson(json: Json | undefined, field: string): Record<string, unknown> {
  return parseObject(json, field, inAnswer);
}
