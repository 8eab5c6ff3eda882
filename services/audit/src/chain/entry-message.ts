/**
 * A record to append, from its `AuditEntry` message: what both adapters that take appends read (the gRPC
 * Append, grpc/audit.grpc.ts, and the AUDIT stream's record requests, nats/record-requests.consumer.ts). A
 * malformed Json field (JSON text that is not JSON) or a missing entry is the caller's error (invalid_input, naming the field).
 */
import type { audit as pb } from '@agw/proto';
import { InputError, fromAuditEntry, fromJson } from '@agw/shared';
import type { ChainEntry } from './record-hash';

export function toEntry(e: pb.AuditEntry | undefined): ChainEntry {
  if (!e) throw InputError.at(['entry'], 'entry is required', 'missing');
  // each JSON value as it was sent ({} when unset): the record is hashed as the client built it
  return fromAuditEntry(e, (json, field) => fromJson(json, field, {}) as Record<string, unknown>);
}
