/** The browser-side verifier (src/lib/merkle.ts) against trees built here with node:crypto (RFC 9162). */
import { createHash } from 'node:crypto';
import { aggregateLeaf, leafHash, rootFromInclusionProof, toHex, unhex, verifyEvidence } from '../src/lib/merkle';

const h = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafH = (b: Buffer) => h(Buffer.from([0]), b);
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 1) return leafH(leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return h(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
function path(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length === 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return m < k ? [...path(m, leaves.slice(0, k)), mth(leaves.slice(k))] : [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
const records = Array.from({ length: 13 }, (_, i) => createHash('sha256').update(`record ${i}`).digest());

describe('browser Merkle verifier', () => {
  it('folds every inclusion proof of trees of size 1..13 to the root', async () => {
    for (let n = 1; n <= 13; n++) {
      const leaves = records.slice(0, n);
      const root = mth(leaves).toString('hex');
      for (let i = 0; i < n; i++) {
        const r = await rootFromInclusionProof(await leafHash(new Uint8Array(leaves[i])), i, n, path(i, leaves).map((b) => new Uint8Array(b)));
        expect(r && toHex(r)).toBe(root);
      }
    }
  });

  it('rejects a flipped proof byte, a wrong index and an index outside the tree', async () => {
    const leaves = records.slice(0, 11);
    const proof = path(5, leaves).map((b) => new Uint8Array(b));
    const root = mth(leaves).toString('hex');
    const leaf = await leafHash(new Uint8Array(leaves[5]));
    const flipped = proof.map((p, i) => (i === 1 ? Uint8Array.from(p, (x, j) => (j === 0 ? x ^ 1 : x)) : p));
    expect(toHex((await rootFromInclusionProof(leaf, 5, 11, flipped))!)).not.toBe(root);
    expect(await rootFromInclusionProof(leaf, 6, 11, proof).then((r) => r && toHex(r))).not.toBe(root);
    expect(await rootFromInclusionProof(leaf, 11, 11, proof)).toBeNull();
  });

  it('checks record -> tree head -> anchored aggregate root step by step', async () => {
    const tenantId = '0b7a3c52-95f2-4c2e-9d7e-7a7e1d7f0a11';
    const leaves = records.slice(0, 7);
    const tenantRoot = mth(leaves).toString('hex');
    const aggLeaves = [Buffer.from(aggregateLeaf('11111111-2222-3333-4444-555555555555', 3, 'ab'.repeat(32))), Buffer.from(aggregateLeaf(tenantId, 7, tenantRoot))];
    const anchor = {
      tenantId,
      tree_index: 2,
      tree_size: 7,
      merkle_root: mth(aggLeaves).toString('hex'),
      aggregate_proof: { leaf_hex: aggLeaves[1].toString('hex'), leaf_index: 1, tree_size: 2, proof: path(1, aggLeaves).map((b) => b.toString('hex')) },
    };
    const proof = { record_hash: leaves[4].toString('hex'), leaf_index: 4, tree_size: 7, tree_index: 2, proof: path(4, leaves).map((b) => b.toString('hex')) };
    const good = await verifyEvidence({ proof, headRoot: tenantRoot, anchor });
    expect(good.ok).toBe(true);
    expect(good.steps).toHaveLength(4);
    const tampered = await verifyEvidence({ proof: { ...proof, proof: proof.proof.map((p, i) => (i === 0 ? `${p.slice(0, -1)}${p.endsWith('0') ? '1' : '0'}` : p)) }, headRoot: tenantRoot, anchor });
    expect(tampered.ok).toBe(false);
    expect(tampered.steps.find((s) => s.label.startsWith('Root equals'))?.ok).toBe(false);
    const otherAnchor = await verifyEvidence({ proof, headRoot: tenantRoot, anchor: { ...anchor, merkle_root: '00'.repeat(32) } });
    expect(otherAnchor.ok).toBe(false);
    expect(unhex('0aff')).toEqual(Uint8Array.of(10, 255));
  });
});
