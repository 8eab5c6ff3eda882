/**
 * The one codec of the free-form `*_json` fields of the gRPC contracts (the list: packages/proto/proto/agw/common.proto):
 * a tool's params and results, custom policy config, MCP tool definitions, metadata, ... Every read and write
 * of such a field goes through these functions: written one way (`jsonText`: JSON.stringify, '' for no value,
 * as proto3 has no unset string), read with a precise invalid_input error naming the field (`json_invalid`,
 * `object_type`) instead of a raw JSON.parse exception.
 * Structured content has messages of its own, not JSON text (error-detail.ts, sealed-values.ts).
 */
import { InputError } from './errors';

/** A free-form value as its `*_json` field carries it: its JSON text; '' when there is no value (undefined). */
export function jsonText(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value);
}

/** The value of a free-form `*_json` field named `field`; `empty` when the field is '' (unset). */
export function fromJsonText(text: string, field: string, empty?: unknown): unknown {
  if (!text) return empty;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw InputError.at([field], `${field} must be JSON (${(e as Error).message})`, 'json_invalid');
  }
}

/** The JSON object of a free-form `*_json` field named `field`; {} when the field is '' (unset). */
export function objectFromJsonText(text: string, field: string): Record<string, unknown> {
  const v = fromJsonText(text, field, {});
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw InputError.at([field], `${field} must be a JSON object`, 'object_type');
  return v as Record<string, unknown>;
}
