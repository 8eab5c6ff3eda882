/**
 * RFC 9162 (SHA-256) leaf/node hashing and the inclusion (2.1.3.2) and consistency (2.1.4.2) verifiers: the
 * one implementation of both checks, used offline by `agw-verify` and by the audit service for the proofs it serves.
 * They follow the RFC literally, with the edge rules of transparency-dev/merkle: a hash is 32 bytes, a
 * consistency proof from size 0 is refused, equal sizes need an empty proof and equal roots. They never throw.
 */
import { hash } from 'node:crypto';

// one-shot hashes: a createHash object per node is a native handle every young-generation collection visits
const sha256 = (...parts: Uint8Array[]): Buffer => hash('sha256', Buffer.concat(parts), 'buffer');
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);
export const leafHash = (leaf: Uint8Array): Buffer => sha256(LEAF, leaf);
const nodeHash = (l: Uint8Array, r: Uint8Array): Buffer => sha256(NODE, l, r);
const odd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);
const isPow2 = (n: number) => n > 0 && 2 ** Math.round(Math.log2(n)) === n;

/**
 * The walk both verifiers share (RFC 9162 2.1.3.2 step 5, 2.1.4.2 step 7): up from node `fn` of the last
 * node `sn`, each proof hash `c` is a left sibling (`left(c)`, then the levels where fn is a right child's
 * only path are skipped) or a right one (`right(c)`). False when the proof is longer or shorter than the path.
 */
function climb(fn: number, sn: number, proof: Uint8Array[], left: (c: Uint8Array) => void, right: (c: Uint8Array) => void): boolean {
  for (const c of proof) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      left(c);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else right(c);
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0;
}

/** Is `leaf` (a leaf hash) at `index` in the tree of `size` leaves whose root is `root`? */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: Uint8Array[], root: Uint8Array): boolean {
  if (leaf.length !== 32 || !Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (proof.some((p) => p.length !== 32)) return false;
  let r: Buffer = Buffer.from(leaf);
  const ok = climb(index, size - 1, proof, (p) => (r = nodeHash(p, r)), (p) => (r = nodeHash(r, p)));
  return ok && r.equals(root);
}

/** Is the tree (size1, root1) a prefix of the tree (size2, root2)? */
export function verifyConsistency(size1: number, size2: number, root1: Uint8Array, root2: Uint8Array, proof: Uint8Array[]): boolean {
  if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2) || size1 < 1 || size2 < size1) return false;
  if (size1 === size2) return proof.length === 0 && Buffer.from(root1).equals(root2);
  if (proof.length === 0 || proof.some((p) => p.length !== 32)) return false;
  const path = isPow2(size1) ? [root1, ...proof] : proof;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Buffer = Buffer.from(path[0]);
  let sr: Buffer = fr;
  const ok = climb(fn, sn, path.slice(1), (c) => {
    fr = nodeHash(c, fr);
    sr = nodeHash(c, sr);
  }, (c) => (sr = nodeHash(sr, c)));
  return ok && fr.equals(root1) && sr.equals(root2);
}
