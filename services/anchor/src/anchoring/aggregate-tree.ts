/**
 * The hour's aggregate tree: one RFC 9162 (SHA-256) Merkle tree over the tenant tree heads of a batch,
 * whose root is the single value written on chain. Leaf bytes (documented in docs/merkle-and-anchoring.md):
 *
 *   tenant_id (16 raw UUID bytes) || tree_size (uint64 big-endian) || merkle_root (32 raw bytes)
 *     [ || checkpoint_sha256 (32 raw bytes) ]
 *
 * 88 bytes when the head had a signed checkpoint when it was anchored (SHA-256 of the whole signed note,
 * so the anchor transaction commits to that exact checkpoint, signature included), else 56 bytes.
 *
 * Leaves are ordered by (tenant_id, tree_index). Each tenant keeps the inclusion proof of its leaf, so
 * anyone can go from the tenant's root to the anchored root with a standard RFC 9162 verifier.
 */
import { sha256Concat } from '@agw/shared';

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);
export const hashLeaf = (leaf: Uint8Array): Buffer => sha256Concat(LEAF_PREFIX, leaf);
export const hashNode = (l: Uint8Array, r: Uint8Array): Buffer => sha256Concat(NODE_PREFIX, l, r);

export interface AggregateLeafInput {
  tenant_id: string;
  tree_size: number;
  merkle_root: string;
  /** SHA-256 (hex) of the head's signed checkpoint note, when it had one */
  checkpoint_sha256?: string | null;
}

export function aggregateLeafBytes(h: AggregateLeafInput): Buffer {
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(h.tree_size));
  const parts = [Buffer.from(h.tenant_id.replace(/-/g, ''), 'hex'), size, Buffer.from(h.merkle_root, 'hex')];
  if (h.checkpoint_sha256) parts.push(Buffer.from(h.checkpoint_sha256, 'hex'));
  return Buffer.concat(parts);
}

const split = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

export function rootOf(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha256Concat();
  if (leaves.length === 1) return leaves[0];
  const k = split(leaves.length);
  return hashNode(rootOf(leaves.slice(0, k)), rootOf(leaves.slice(k)));
}

/** RFC 9162 2.1.3.1 PATH(m, D[n]) over leaf hashes in memory. */
export function proofOf(leaves: Buffer[], m: number): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k ? [...proofOf(leaves.slice(0, k), m), rootOf(leaves.slice(k))] : [...proofOf(leaves.slice(k), m - k), rootOf(leaves.slice(0, k))];
}

/** RFC 9162 2.1.3.2: the root an inclusion proof leads to (undefined when the proof has the wrong shape). */
export function rootFromProof(leafHash: Buffer, index: number, size: number, proof: Buffer[]): Buffer | undefined {
  if (index < 0 || index >= size) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = hashNode(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else r = hashNode(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

export interface AggregateTree {
  root: string;
  leaves: Array<{ leaf_index: number; leaf_hex: string; proof: string[] }>;
}

/** Build the batch tree for heads already in leaf order. */
export function buildAggregate(heads: AggregateLeafInput[]): AggregateTree {
  const bytes = heads.map(aggregateLeafBytes);
  const hashes = bytes.map(hashLeaf);
  return {
    root: rootOf(hashes).toString('hex'),
    leaves: heads.map((_, i) => ({ leaf_index: i, leaf_hex: bytes[i].toString('hex'), proof: proofOf(hashes, i).map((p) => p.toString('hex')) })),
  };
}
