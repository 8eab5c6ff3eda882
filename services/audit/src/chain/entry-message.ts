/**
 * A record to append, from its `AuditEntry` message: what both adapters that take appends read (the gRPC
 * Append, grpc/audit.grpc.ts, and the AUDIT stream's record requests, nats/record-requests.consumer.ts). A
 * malformed `*_json` field or a missing entry is the caller's error (invalid_input, naming the field).
 */
import type { audit as pb } from '@agw/proto';
import { InputError, fromAuditEntry } from '@agw/shared';
import type { ChainEntry } from './record-hash';

/** A `*_json` field's value (`fallback` when empty); a malformed one is the caller's invalid_input naming it. */
export function parseJson<T>(text: string, field: string, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw InputError.at([field], 'must be JSON', 'json_invalid');
  }
}

export function toEntry(e: pb.AuditEntry | undefined): ChainEntry {
  if (!e) throw InputError.at(['entry'], 'entry is required', 'missing');
  return fromAuditEntry(e, (text, field) => parseJson(text, field, {}));
}
