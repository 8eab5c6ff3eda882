/**
 * RFC 8785 (JSON Canonicalization Scheme) through the `canonicalize` package, so anyone can recompute a
 * hash from the same JSON with any JCS implementation, plus the SHA-256 helpers used by the audit chain.
 */
import { hash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';

export function canonicalJson(value: unknown): string {
  const s = (canonicalizeImpl as unknown as (v: unknown) => string | undefined)(value);
  if (s === undefined) throw new TypeError('value has no JSON representation');
  return s;
}

/**
 * SHA-256 of a string's UTF-8 bytes, or of bytes, in hex. The hashes of this module are one-shot
 * (`crypto.hash`): a `createHash` object is a native handle that every young-generation collection of the
 * process must visit until it is collected, and a Merkle proof or tree build makes thousands of them
 * (1,000,000 node hashes: scavenge median 2.0-2.2 ms with `createHash`, 0.12-0.15 ms one-shot;
 * docs/history/performance-2026.md, "Proofs and tree builds, round 4").
 */
export function sha256Hex(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}

/** Inputs of up to this many bytes are joined in one reused buffer (hashing is synchronous). */
const scratch = Buffer.allocUnsafe(256);

/** SHA-256 of the concatenation of `parts`, as bytes (e.g. RFC 9162's leaf and node hashes). */
export function sha256Concat(...parts: readonly Uint8Array[]): Buffer {
  let length = 0;
  for (const p of parts) length += p.length;
  const joined = length <= scratch.length ? scratch.subarray(0, length) : Buffer.allocUnsafe(length);
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.length;
  }
  return hash('sha256', joined, 'buffer');
}
