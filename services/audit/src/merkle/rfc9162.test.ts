/**
 * Every vector of test/fixtures/merkle-rfc9162.json (transparency-dev/merkle, google/certificate-
 * transparency, trillian; see the SOURCE note beside it): hasher, reference roots and nodes, valid
 * proofs and the 184 known-bad proofs, plus the proofs this module generates.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  EMPTY_ROOT,
  consistencyRanges,
  hashLeaf,
  hashNode,
  hashRange,
  inclusionProofOfLeafHashes,
  inclusionRanges,
  nodesOfRange,
  recordLeafBytes,
  rootOfLeafHashes,
  verifyConsistency,
  verifyInclusion,
} from './rfc9162';

interface Vectors {
  hasherVectors: Array<{ kind: string; desc: string; inputHex?: string; leftHex?: string; rightHex?: string; expectedHex: string }>;
  referenceTree: { leafInputsHex: string[]; nodeHashesByLevel: string[][]; rootsBySize: string[] };
  inclusion: Array<{ path: string; desc: string; leafIndex: number; treeSize: number; leafHashHex: string; proofHex: string[]; rootHex: string; expectValid: boolean }>;
  consistency: Array<{ path: string; desc: string; size1: number; size2: number; root1Hex: string; root2Hex: string; proofHex: string[]; expectValid: boolean }>;
  legacyKnownAnswer: {
    paths: Array<{ leaf: number; snapshot: number; path: string[]; note?: string }>;
    consistencyProofs: Array<{ snapshot1: number; snapshot2: number; proof: string[] }>;
  };
}

const vectors: Vectors = JSON.parse(readFileSync(path.join(__dirname, '../../test/fixtures/merkle-rfc9162.json'), 'utf8'));
const hex = (s: string) => Buffer.from(s, 'hex');
const leaves = vectors.referenceTree.leafInputsHex.map((h) => hashLeaf(hex(h)));

describe('RFC 9162 hashing', () => {
  it.each(vectors.hasherVectors.map((v) => [v.desc, v] as const))('%s', (_d, v) => {
    let got: Buffer;
    if (v.kind === 'emptyRoot') got = EMPTY_ROOT;
    else if (v.kind === 'leaf') got = hashLeaf(hex(v.inputHex!));
    else got = hashNode(hex(v.leftHex!), hex(v.rightHex!));
    expect(got.toString('hex')).toBe(v.expectedHex);
  });

  it('reproduces every reference root MTH(D[0:n]) for n = 0..8', () => {
    vectors.referenceTree.rootsBySize.forEach((root, n) => expect(rootOfLeafHashes(leaves.slice(0, n)).toString('hex')).toBe(root));
  });

  it('reproduces every reference perfect-subtree hash and folds stored nodes into each root', () => {
    const nodes = vectors.referenceTree.nodeHashesByLevel;
    nodes.forEach((level, l) =>
      level.forEach((h, i) => expect(rootOfLeafHashes(leaves.slice(i * 2 ** l, (i + 1) * 2 ** l)).toString('hex')).toBe(h)),
    );
    const get = (k: { level: number; index: number }) => hex(nodes[k.level][k.index]);
    vectors.referenceTree.rootsBySize.forEach((root, n) => expect(hashRange([0, n], get).toString('hex')).toBe(root));
  });
});

describe('inclusion vectors', () => {
  const cases = vectors.inclusion.map((v) => [`${v.path} (${v.desc}) -> ${v.expectValid ? 'valid' : 'invalid'}`, v] as const);
  it.each(cases)('%s', (_d, v) => {
    expect(verifyInclusion(hex(v.leafHashHex), v.leafIndex, v.treeSize, v.proofHex.map(hex), hex(v.rootHex))).toBe(v.expectValid);
  });
});

describe('consistency vectors', () => {
  const cases = vectors.consistency.map((v) => [`${v.path} (${v.desc}) -> ${v.expectValid ? 'valid' : 'invalid'}`, v] as const);
  it.each(cases)('%s', (_d, v) => {
    expect(verifyConsistency(v.size1, v.size2, hex(v.root1Hex), hex(v.root2Hex), v.proofHex.map(hex))).toBe(v.expectValid);
  });
});

describe('known-bad proofs', () => {
  it('has all 184 of them and rejects every one', () => {
    const bad = [...vectors.inclusion, ...vectors.consistency].filter((v) => !v.expectValid);
    expect(bad).toHaveLength(184);
    const accepted = [
      ...vectors.inclusion.filter((v) => !v.expectValid && verifyInclusion(hex(v.leafHashHex), v.leafIndex, v.treeSize, v.proofHex.map(hex), hex(v.rootHex))),
      ...vectors.consistency.filter((v) => !v.expectValid && verifyConsistency(v.size1, v.size2, hex(v.root1Hex), hex(v.root2Hex), v.proofHex.map(hex))),
    ];
    expect(accepted.map((v) => v.path)).toEqual([]);
  });
});

describe('proof generation', () => {
  it('matches the published inclusion paths (1-based leaves in the legacy tables)', () => {
    for (const p of vectors.legacyKnownAnswer.paths) {
      if (p.leaf === 0) continue; // published as invalid
      const proof = inclusionProofOfLeafHashes(leaves.slice(0, p.snapshot), p.leaf - 1);
      expect(proof.map((b) => b.toString('hex'))).toEqual(p.path);
    }
  });

  it('matches the published consistency proofs', () => {
    for (const c of vectors.legacyKnownAnswer.consistencyProofs) {
      const proof = consistencyRanges(c.snapshot1, c.snapshot2).map(([s, e]) => rootOfLeafHashes(leaves.slice(s, e)));
      expect(proof.map((b) => b.toString('hex'))).toEqual(c.proof);
    }
  });

  it('every generated inclusion and consistency proof for trees up to 70 leaves verifies, and a flipped bit does not', () => {
    const many = Array.from({ length: 70 }, (_, i) => hashLeaf(Buffer.from([i, i >> 8])));
    const roots = many.map((_, n) => rootOfLeafHashes(many.slice(0, n)));
    roots.push(rootOfLeafHashes(many));
    for (let n = 1; n <= many.length; n++) {
      for (let m = 0; m < n; m++) {
        const proof = inclusionRanges(m, n).map(([s, e]) => rootOfLeafHashes(many.slice(s, e)));
        expect(verifyInclusion(many[m], m, n, proof, roots[n])).toBe(true);
        if (proof.length) {
          const bad = proof.map((b) => Buffer.from(b));
          bad[0][0] ^= 1;
          expect(verifyInclusion(many[m], m, n, bad, roots[n])).toBe(false);
        }
      }
      for (let m = 1; m <= n; m++) {
        const proof = consistencyRanges(m, n).map(([s, e]) => rootOfLeafHashes(many.slice(s, e)));
        expect(verifyConsistency(m, n, roots[m], roots[n], proof)).toBe(true);
        if (m < n) expect(verifyConsistency(m, n, roots[m], roots[n - 1 === m ? n : n - 1], proof)).toBe(n - 1 === m);
      }
    }
  });

  it('decomposes ranges into aligned perfect subtrees, largest first', () => {
    expect(nodesOfRange([0, 7])).toEqual([
      { level: 2, index: 0 },
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
    expect(nodesOfRange([8, 13])).toEqual([
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
  });

  it('uses the 32 raw bytes of a record_hash as leaf bytes', () => {
    expect(recordLeafBytes('ab'.repeat(32))).toEqual(Buffer.alloc(32, 0xab));
    expect(() => recordLeafBytes('xyz')).toThrow(RangeError);
  });
});
