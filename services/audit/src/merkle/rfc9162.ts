/**
 * RFC 9162 (Certificate Transparency v2, same hashing as RFC 6962) Merkle tree arithmetic with SHA-256:
 *
 *   leaf hash  = SHA-256(0x00 || leaf bytes)
 *   node hash  = SHA-256(0x01 || left || right)
 *   empty tree = SHA-256("")
 *
 * Pure functions, no I/O. Proofs are produced in two steps so a caller can read stored nodes in one
 * query: `inclusionRanges` / `consistencyRanges` say which leaf ranges the proof needs (RFC 9162
 * 2.1.3.1 PATH and 2.1.4.1 SUBPROOF), `nodesOfRange` turns a range into the perfect subtrees that cover
 * it (the nodes a store keeps, addressed by level and index), and `hashRange` folds them back.
 * Verification (RFC 9162 2.1.3.2 and 2.1.4.2) is `@agw/verifier`'s, re-exported here.
 *
 * Sizes and indexes are plain numbers (exact up to 2^53), so no 32-bit bit operators are used.
 */
import { sha256Concat } from '@agw/shared';

export const HASH_SIZE = 32;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

export const hashLeaf = (leaf: Uint8Array): Buffer => sha256Concat(LEAF_PREFIX, leaf);
export const hashNode = (left: Uint8Array, right: Uint8Array): Buffer => sha256Concat(NODE_PREFIX, left, right);
export const EMPTY_ROOT: Buffer = sha256Concat();

/** A perfect subtree: the hash of leaves [index * 2^level, (index + 1) * 2^level). Level 0 = leaf hashes. */
export interface NodeKey {
  level: number;
  index: number;
}

/** A half-open leaf range [start, end). */
export type LeafRange = readonly [start: number, end: number];

/** The largest power of two strictly smaller than n (n >= 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The perfect subtrees covering [start, end), largest first. For the ranges RFC 9162 uses (the start is
 * aligned to a power of two at least as large as the range) the MTH of the range is the right fold
 * hashNode(s1, hashNode(s2, ... sm)) of these subtrees.
 */
export function nodesOfRange([start, end]: LeafRange): NodeKey[] {
  const out: NodeKey[] = [];
  let s = start;
  while (s < end) {
    let size = 1;
    let level = 0;
    while (s % (size * 2) === 0 && s + size * 2 <= end) {
      size *= 2;
      level++;
    }
    out.push({ level, index: s / size });
    s += size;
  }
  return out;
}

/** MTH of a range from its perfect subtrees (`get` returns a stored node hash). */
export function hashRange(range: LeafRange, get: (k: NodeKey) => Buffer): Buffer {
  const nodes = nodesOfRange(range);
  if (nodes.length === 0) return EMPTY_ROOT;
  let acc = get(nodes[nodes.length - 1]);
  for (let i = nodes.length - 2; i >= 0; i--) acc = hashNode(get(nodes[i]), acc);
  return acc;
}

/** RFC 9162 2.1.3.1 PATH(m, D[0:n]): the ranges whose MTHs form the inclusion proof of leaf m, leaf side first. */
export function inclusionRanges(m: number, n: number): LeafRange[] {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && m >= 0 && m < n)) throw new RangeError(`leaf ${m} is not in a tree of size ${n}`);
  const out: LeafRange[] = [];
  const walk = (m: number, off: number, n: number): void => {
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, off, k);
      out.push([off + k, off + n]);
    } else {
      walk(m - k, off + k, n - k);
      out.push([off, off + k]);
    }
  };
  walk(m, 0, n);
  return out;
}

/** RFC 9162 2.1.4.1 PROOF(m, D[0:n]): the ranges whose MTHs form the consistency proof from size m to n. */
export function consistencyRanges(m: number, n: number): LeafRange[] {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && m > 0 && m <= n)) throw new RangeError(`no consistency proof from size ${m} to ${n}`);
  const out: LeafRange[] = [];
  const sub = (m: number, off: number, n: number, b: boolean): void => {
    if (m === n) {
      if (!b) out.push([off, off + n]);
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, off, k, b);
      out.push([off + k, off + n]);
    } else {
      sub(m - k, off + k, n - k, false);
      out.push([off, off + k]);
    }
  };
  if (m < n) sub(m, 0, n, true);
  return out;
}

/** Every stored node a set of ranges needs (deduplicated), for one batched read. */
export function nodesOfRanges(ranges: LeafRange[]): NodeKey[] {
  const seen = new Map<string, NodeKey>();
  for (const r of ranges) for (const k of nodesOfRange(r)) seen.set(`${k.level}:${k.index}`, k);
  return [...seen.values()];
}

/** The root of a tree of `size` leaves from its stored perfect subtrees. */
export const rootRanges = (size: number): LeafRange[] => (size > 0 ? [[0, size]] : []);

/** Reference MTH over leaf hashes held in memory (tests, small aggregate trees). */
export function rootOfLeafHashes(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0];
  const k = splitPoint(leaves.length);
  return hashNode(rootOfLeafHashes(leaves.slice(0, k)), rootOfLeafHashes(leaves.slice(k)));
}

/** Inclusion proof over leaf hashes held in memory. */
export function inclusionProofOfLeafHashes(leaves: Buffer[], m: number): Buffer[] {
  return inclusionRanges(m, leaves.length).map(([s, e]) => rootOfLeafHashes(leaves.slice(s, e)));
}

/** RFC 9162 2.1.3.2 and 2.1.4.2: the one verifier implementation, shared with the offline `agw-verify`. */
export { verifyInclusion, verifyConsistency } from '@agw/verifier';

/** The leaf bytes of an audit record: the 32 raw bytes of its record_hash (64 hex chars). */
export function recordLeafBytes(recordHashHex: string): Buffer {
  if (!/^[0-9a-f]{64}$/.test(recordHashHex)) throw new RangeError('record_hash must be 64 lowercase hex characters');
  return Buffer.from(recordHashHex, 'hex');
}
