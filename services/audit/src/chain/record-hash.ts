/**
 * The exact bytes of the hash chain (documented in docs/audit.md):
 *   record_hash = hex(SHA-256( UTF-8(JCS(content)) || UTF-8(prev_hash) ))
 * where JCS is RFC 8785 canonical JSON, `content` is the object built by `hashedContent`, and prev_hash
 * is the previous record's record_hash (64 lowercase hex chars) or the literal `GENESIS` for the first.
 */
import { type ActionRecord, canonicalJson, hashedContent, sha256Hex } from '@agw/shared';

export const GENESIS = 'GENESIS';

/** A chain entry is the fleet's action record (`@agw/shared` action-record.ts holds its one field list). */
export type ChainEntry = ActionRecord;
export { hashedContent };

/** The canonical JSON text of the hashed content (what precedes prev_hash in the hashed bytes). */
export function canonicalContent(entry: ChainEntry): string {
  return canonicalJson(hashedContent(entry));
}

export function recordHash(entry: ChainEntry, prevHash: string): string {
  return sha256Hex(Buffer.concat([Buffer.from(canonicalContent(entry), 'utf8'), Buffer.from(prevHash, 'utf8')]));
}
