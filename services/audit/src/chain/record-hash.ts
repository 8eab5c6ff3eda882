/**
 * The exact bytes of the hash chain (documented in docs/audit.md):
 *   record_hash = hex(SHA-256( UTF-8(JCS(content)) || UTF-8(prev_hash) ))
 * where JCS is RFC 8785 canonical JSON, `content` is the object built by `hashedContent`, and prev_hash
 * is the previous record's record_hash (64 lowercase hex chars) or the literal `GENESIS` for the first.
 *
 * Hot on both paths (every append; every record of GET /api/audit/verify), so computed without
 * per-record waste, with the same bytes as `canonicalJson(hashedContent(entry))` (tested on many shapes):
 * the content's top-level keys are always the same (the record's fields), so their JCS order (and their quoted
 * form) is computed once; nested values (params, violations, details) and strings go through the same JCS
 * implementation (`canonicalize`), and a value JCS would omit (undefined) is omitted. The digest is
 * `crypto.hash` over one string: UTF-8(a + b) = UTF-8(a) || UTF-8(b) here because the canonical text
 * always ends with `}`, so no surrogate pair can form across the boundary.
 */
import { hash } from 'node:crypto';
import { type ActionRecord, canonicalJson, hashedContent, recordFieldsHashedWhenSet } from '@agw/shared';

export const GENESIS = 'GENESIS';

/** A chain entry is the fleet's action record (`@agw/shared` action-record.ts holds its one field list). */
export type ChainEntry = ActionRecord;
export { hashedContent };

/**
 * `canonicalContent` for a record whose hashed content is `content` and whose fields of `whenSet` are left out
 * while null (`hashedContentOf`, @agw/shared): the record's own is `canonicalContent`; a test makes one for a
 * record with a field added to it.
 */
export function canonicalContentOf(content: (r: ActionRecord) => Record<string, unknown>, whenSet: ReadonlySet<string>): (entry: ChainEntry) => string {
  /** the hashed keys in JCS order (UTF-16 code-unit order, what Array#sort does for strings) */
  const keys = Object.keys(content({} as ActionRecord)).sort();
  const keyPrefix = keys.map((k) => `${JSON.stringify(k)}:`);
  const omitNull = keys.map((k) => whenSet.has(k));
  /**
   * Whether `content` copies each field under its own name (it does today): then the fields are read from the
   * entry itself, without building the content object per record. Checked once with a probe whose every field
   * is distinct; if the mapping ever changes, the content object is built as before.
   */
  const identity = (() => {
    const probe = Object.fromEntries(keys.map((k) => [k, { k }])) as unknown as ActionRecord;
    const c = content(probe);
    return keys.every((k) => c[k] === (probe as unknown as Record<string, unknown>)[k]);
  })();
  return (entry) => {
    const fields = (identity ? entry : content(entry)) as unknown as Record<string, unknown>;
    let out = '{';
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const v = fields[keys[i]];
      if (v === undefined || typeof v === 'symbol') continue; // what JCS (canonicalize) omits from an object
      if (v === null && omitNull[i]) continue; // a field added to written chains, hashed only when set
      // strings, booleans and null are JSON.stringify'd by canonicalize itself; numbers and objects go through it
      const text = v === null || typeof v === 'string' || typeof v === 'boolean' ? JSON.stringify(v) : canonicalJson(v);
      out += (first ? '' : ',') + keyPrefix[i] + text;
      first = false;
    }
    return `${out}}`;
  };
}

/** The canonical JSON text of the hashed content (what precedes prev_hash in the hashed bytes). */
export const canonicalContent: (entry: ChainEntry) => string = canonicalContentOf(hashedContent, new Set(recordFieldsHashedWhenSet));

export function recordHash(entry: ChainEntry, prevHash: string): string {
  return hash('sha256', canonicalContent(entry) + prevHash, 'hex');
}
