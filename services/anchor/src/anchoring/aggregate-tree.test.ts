/**
 * The aggregate tree against RFC 6962/9162 reference values (transparency-dev/merkle
 * testonly/constants.go, Apache-2.0; the full vector set is tested in services/audit).
 */
import { aggregateLeafBytes, buildAggregate, hashLeaf, proofOf, rootFromProof, rootOf } from './aggregate-tree';

const inputs = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) => hashLeaf(Buffer.from(h, 'hex')));
const rootsBySize = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

describe('aggregate tree (RFC 9162)', () => {
  it('reproduces the reference roots and its proofs lead back to them', () => {
    rootsBySize.forEach((root, n) => {
      expect(rootOf(inputs.slice(0, n)).toString('hex')).toBe(root);
      for (let m = 0; m < n; m++) expect(rootFromProof(inputs[m], m, n, proofOf(inputs.slice(0, n), m))?.toString('hex')).toBe(root);
    });
  });

  it('matches a published inclusion path (leaf 6 of 8, google/certificate-transparency kSHA256Paths)', () => {
    expect(proofOf(inputs, 5).map((b) => b.toString('hex'))).toEqual([
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
  });

  it('binds tenant, tree size and root into 56 leaf bytes', () => {
    const leaf = aggregateLeafBytes({ tenant_id: '00112233-4455-6677-8899-aabbccddeeff', tree_size: 258, merkle_root: 'ab'.repeat(32) });
    expect(leaf.toString('hex')).toBe(`00112233445566778899aabbccddeeff0000000000000102${'ab'.repeat(32)}`);
    const tree = buildAggregate([
      { tenant_id: '00112233-4455-6677-8899-aabbccddeeff', tree_size: 1, merkle_root: 'aa'.repeat(32) },
      { tenant_id: '10112233-4455-6677-8899-aabbccddeeff', tree_size: 2, merkle_root: 'bb'.repeat(32) },
      { tenant_id: '20112233-4455-6677-8899-aabbccddeeff', tree_size: 3, merkle_root: 'cc'.repeat(32) },
    ]);
    for (const l of tree.leaves) {
      expect(rootFromProof(hashLeaf(Buffer.from(l.leaf_hex, 'hex')), l.leaf_index, 3, l.proof.map((p) => Buffer.from(p, 'hex')))?.toString('hex')).toBe(tree.root);
    }
    expect(rootFromProof(hashLeaf(Buffer.from(tree.leaves[0].leaf_hex, 'hex')), 0, 3, [])).toBeUndefined();
  });

  it('a leaf covers the signed checkpoint when the head had one (88 bytes), else 56 bytes', () => {
    const head = { tenant_id: '8c1d2f0e-0000-4000-8000-0000000000e2', tree_size: 9, merkle_root: 'ab'.repeat(32) };
    const short = aggregateLeafBytes(head);
    expect(short).toHaveLength(56);
    expect(aggregateLeafBytes({ ...head, checkpoint_sha256: null }).equals(short)).toBe(true);
    const long = aggregateLeafBytes({ ...head, checkpoint_sha256: 'cd'.repeat(32) });
    expect(long).toHaveLength(88);
    expect(long.subarray(0, 56).equals(short)).toBe(true);
    expect(long.subarray(56).toString('hex')).toBe('cd'.repeat(32));
    // another checkpoint is another leaf, so another aggregate root
    expect(buildAggregate([{ ...head, checkpoint_sha256: 'cd'.repeat(32) }]).root).not.toBe(buildAggregate([{ ...head, checkpoint_sha256: 'ce'.repeat(32) }]).root);
  });
});
