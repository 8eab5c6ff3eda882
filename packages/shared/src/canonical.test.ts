import { createHash } from 'node:crypto';
import { sha256Concat, sha256Hex } from './canonical';

const reference = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

describe('sha256Hex', () => {
  it('hashes a string as its UTF-8 bytes, and bytes as they are', () => {
    for (const s of ['', 'abc', 'ünïcødé ✓ 𝄞', 'x'.repeat(10_000)]) {
      expect(sha256Hex(s)).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
      expect(sha256Hex(Buffer.from(s, 'utf8'))).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
    }
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('sha256Concat', () => {
  it('is the SHA-256 of the parts joined, small (joined in the reused buffer) or large', () => {
    const node = [Buffer.from([1]), Buffer.alloc(32, 0xaa), Buffer.alloc(32, 0xbb)];
    expect(sha256Concat(...node).equals(reference(...node))).toBe(true);
    const large = [Buffer.from([0]), Buffer.alloc(300, 7), new Uint8Array([1, 2, 3])];
    expect(sha256Concat(...large).equals(reference(...large))).toBe(true);
    const exactly = [Buffer.alloc(256, 9)];
    expect(sha256Concat(...exactly).equals(reference(...exactly))).toBe(true);
    expect(sha256Concat().toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('answers a buffer of its own: a later hash does not change an earlier answer', () => {
    const first = sha256Concat(Buffer.from('one'));
    const copy = Buffer.from(first);
    sha256Concat(Buffer.from('two'), Buffer.alloc(40, 1));
    expect(first.equals(copy)).toBe(true);
    // an answer can be an input of the next hash (a Merkle node of two nodes)
    const left = sha256Concat(Buffer.from([0]), Buffer.from('a'));
    const right = sha256Concat(Buffer.from([0]), Buffer.from('b'));
    expect(sha256Concat(Buffer.from([1]), left, right).equals(reference(Buffer.from([1]), left, right))).toBe(true);
  });
});
