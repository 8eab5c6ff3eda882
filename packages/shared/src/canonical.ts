/**
 * RFC 8785 (JSON Canonicalization Scheme) through the `canonicalize` package, so anyone can recompute a
 * hash from the same JSON with any JCS implementation, plus the SHA-256 helpers used by the audit chain.
 */
import { createHash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';

export function canonicalJson(value: unknown): string {
  const s = (canonicalizeImpl as unknown as (v: unknown) => string | undefined)(value);
  if (s === undefined) throw new TypeError('value has no JSON representation');
  return s;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
