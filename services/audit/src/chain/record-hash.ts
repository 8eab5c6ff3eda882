/**
 * The exact bytes of the hash chain (documented in docs/audit.md):
 *   record_hash = hex(SHA-256( UTF-8(JCS(content)) || UTF-8(prev_hash) ))
 * where JCS is RFC 8785 canonical JSON, `content` is the object built by `hashedContent`, and prev_hash
 * is the previous record's record_hash (64 lowercase hex chars) or the literal `GENESIS` for the first.
 *
 * Hot on both paths (every append; every record of GET /api/audit/verify), so computed without
 * per-record waste, with the same bytes as `canonicalJson(hashedContent(entry))` (tested on many shapes):
 * the content's top-level keys are always the same 18, so their JCS order (and their quoted form) is
 * computed once; nested values (params, violations, details) and strings go through the same JCS
 * implementation (`canonicalize`), and a value JCS would omit (undefined) is omitted. The digest is
 * `crypto.hash` over one string: UTF-8(a + b) = UTF-8(a) || UTF-8(b) here because the canonical text
 * always ends with `}`, so no surrogate pair can form across the boundary.
 */
import { hash } from 'node:crypto';
import { type ActionRecord, canonicalJson, hashedContent } from '@agw/shared';

export const GENESIS = 'GENESIS';

/** A chain entry is the fleet's action record (`@agw/shared` action-record.ts holds its one field list). */
export type ChainEntry = ActionRecord;
export { hashedContent };

const probe = hashedContent({} as ActionRecord);
/** the hashed keys in JCS order (UTF-16 code-unit order, what Array#sort does for strings) */
const KEYS = Object.keys(probe).sort();
const KEY_PREFIX = KEYS.map((k) => `${JSON.stringify(k)}:`);

/**
 * Whether `hashedContent` copies each field under its own name (it does today): then the fields are read
 * from the entry itself, without building the content object per record. Checked once with a probe
 * whose every field is distinct; if the mapping ever changes, the content object is built as before.
 */
const IDENTITY = (() => {
  const probe = Object.fromEntries(KEYS.map((k) => [k, { k }])) as unknown as ActionRecord;
  const content = hashedContent(probe) as Record<string, unknown>;
  return KEYS.every((k) => content[k] === (probe as unknown as Record<string, unknown>)[k]);
})();

/** The canonical JSON text of the hashed content (what precedes prev_hash in the hashed bytes). */
export function canonicalContent(entry: ChainEntry): string {
  const content = (IDENTITY ? entry : hashedContent(entry)) as unknown as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (let i = 0; i < KEYS.length; i++) {
    const v = content[KEYS[i]];
    if (v === undefined || typeof v === 'symbol') continue; // what JCS (canonicalize) omits from an object
    // strings, booleans and null are JSON.stringify'd by canonicalize itself; numbers and objects go through it
    const text = v === null || typeof v === 'string' || typeof v === 'boolean' ? JSON.stringify(v) : canonicalJson(v);
    out += (first ? '' : ',') + KEY_PREFIX[i] + text;
    first = false;
  }
  return `${out}}`;
}

export function recordHash(entry: ChainEntry, prevHash: string): string {
  return hash('sha256', canonicalContent(entry) + prevHash, 'hex');
}
