/**
 * The witness against the C2SP tlog-witness rules (each status of add-checkpoint), its cosignatures against
 * an independent reading of tlog-cosignature (written out here, not the verifier's code), and the Ed25519
 * primitives against the test vectors of Go's golang.org/x/mod/sumdb/note (note_test.go), the reference
 * implementation of signed notes: no npm package implements C2SP notes or cosignatures.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { type VerifierKey, checkWitnessPolicy, cosignatureTime, keyIdOf, openNote, parseCosignerKey, parseVerifierKey } from '@agw/verifier';
import { Witness, originHash } from './witness';
import { formatWitnessKeyFile, parseWitnessKeyFile, witnessKeyFromSeed } from './witness-key';
import { MemoryWitnessStore } from './witness-store';

// --- a tiny RFC 9162 log of our own, signed like the gateway's checkpoints (C2SP signed-note, key type 0x01)
const h = (...p: Buffer[]) => createHash('sha256').update(Buffer.concat(p)).digest();
const leaf = (i: number) => h(Buffer.from([0]), Buffer.from(`leaf ${i}`));
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return h(Buffer.alloc(0));
  if (leaves.length === 1) return leaves[0];
  const k = 2 ** Math.floor(Math.log2(leaves.length - 1));
  return h(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
/** RFC 9162 2.1.4.1 SUBPROOF */
function subproof(m: number, leaves: Buffer[], b: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return b ? [] : [mth(leaves)];
  const k = 2 ** Math.floor(Math.log2(n - 1));
  if (m <= k) return [...subproof(m, leaves.slice(0, k), b), mth(leaves.slice(k))];
  return [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const logSeed = Buffer.alloc(32, 7);
const ORIGIN = 'gw.test/agw/tenant-1';
const logPriv = createPrivateKey({ key: Buffer.concat([PKCS8, logSeed]), format: 'der', type: 'pkcs8' });
const logPub = Buffer.from(createPublicKey(logPriv).export({ format: 'der', type: 'spki' })).subarray(-32);
const logVkey = `${ORIGIN}+${keyIdOf(ORIGIN, logPub).toString('hex')}+${Buffer.concat([Buffer.from([1]), logPub]).toString('base64')}`;
const logKey: VerifierKey = parseVerifierKey(logVkey);
function checkpoint(size: number, root = mth(Array.from({ length: size }, (_, i) => leaf(i))), origin = ORIGIN, priv = logPriv, keyId = logKey.keyId): string {
  const text = `${origin}\n${size}\n${root.toString('base64')}\n`;
  return `${text}\n\u2014 ${origin} ${Buffer.concat([keyId, sign(null, Buffer.from(text), priv)]).toString('base64')}\n`;
}
const request = (old: number, proof: Buffer[], note: string) => `old ${old}\n${proof.map((p) => `${p.toString('base64')}\n`).join('')}\n${note}`;
const leaves = (n: number) => Array.from({ length: n }, (_, i) => leaf(i));

const wkey = witnessKeyFromSeed('witness.test/w1', Buffer.alloc(32, 9));
const newWitness = (o: { pinPrefix?: string; now?: () => number } = {}) =>
  new Witness({ key: wkey, store: new MemoryWitnessStore(), logs: o.pinPrefix ? undefined : new Map([[ORIGIN, [logKey]]]), now: o.now ?? (() => 1_764_000_000_000), pinPrefix: o.pinPrefix });

describe('add-checkpoint (C2SP tlog-witness)', () => {
  it('cosigns a first checkpoint (old 0), then one consistent with it; 409 with the latest size when the old size is not it', async () => {
    const w = newWitness();
    const first = await w.addCheckpoint(request(0, [], checkpoint(5)));
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/^\u2014 witness\.test\/w1 [A-Za-z0-9+/]+=*\n$/);
    const stale = await w.addCheckpoint(request(0, [], checkpoint(9)));
    expect(stale).toEqual({ status: 409, contentType: 'text/x.tlog.size', body: '5\n' });
    const next = await w.addCheckpoint(request(5, subproof(5, leaves(9), true), checkpoint(9)));
    expect(next.status).toBe(200);
    // the monitoring endpoint: the latest cosigned checkpoint with the log's and the witness's signatures
    const latest = await w.latest(originHash(ORIGIN));
    expect(latest.status).toBe(200);
    expect(latest.body).toBe(`${checkpoint(9)}${next.body}`);
    expect((await w.latest('0'.repeat(64))).status).toBe(404);
  });

  it('refuses a fork: a proof that does not verify, or the same size with another root (422, kept as evidence)', async () => {
    const w = newWitness();
    expect((await w.addCheckpoint(request(0, [], checkpoint(4)))).status).toBe(200);
    const forked = [...leaves(4).slice(0, 3), leaf(99), ...leaves(8).slice(4)];
    const bad = await w.addCheckpoint(request(4, subproof(4, forked, true), checkpoint(8, mth(forked))));
    expect(bad.status).toBe(422);
    expect(bad.body).toMatch(/does not verify: the log forked/);
    const sameSize = await w.addCheckpoint(request(4, [], checkpoint(4, mth(forked.slice(0, 4)))));
    expect(sameSize.status).toBe(422);
    expect(w.refusals.map((r) => r.reason)).toHaveLength(2);
    // the honest log still goes on
    expect((await w.addCheckpoint(request(4, subproof(4, leaves(8), true), checkpoint(8)))).status).toBe(200);
  });

  it('answers each rule with its status: 404 unknown origin, 403 unsigned or a failing trusted signature, 400 old above size or a bad body, 422 empty-tree and size-0 proof rules', async () => {
    const w = newWitness();
    expect((await w.addCheckpoint(request(0, [], checkpoint(3, undefined, 'other.test/log')))).status).toBe(404);
    const otherPriv = createPrivateKey({ key: Buffer.concat([PKCS8, Buffer.alloc(32, 1)]), format: 'der', type: 'pkcs8' });
    expect((await w.addCheckpoint(request(0, [], checkpoint(3, undefined, ORIGIN, otherPriv, Buffer.from('abcdabcd', 'hex'))))).status).toBe(403);
    // the trusted key's name and id, a signature by another key: malformed per signed-note
    expect((await w.addCheckpoint(request(0, [], checkpoint(3, undefined, ORIGIN, otherPriv)))).status).toBe(403);
    expect((await w.addCheckpoint(request(7, [], checkpoint(3)))).status).toBe(400);
    expect((await w.addCheckpoint(`old 01\n\n${checkpoint(3)}`)).status).toBe(400);
    expect((await w.addCheckpoint(`${checkpoint(3)}`)).status).toBe(400);
    expect((await w.addCheckpoint(request(0, [], checkpoint(0, h(Buffer.from('x')))))).status).toBe(422);
    expect((await w.addCheckpoint(request(0, [leaf(1)], checkpoint(3)))).status).toBe(422);
    expect((await w.addCheckpoint(request(0, [], checkpoint(0)))).status).toBe(200);
  });

  it('checks the old size and updates it in one step: of two racing submissions from the same state, one is 409', async () => {
    const w = newWitness();
    await w.addCheckpoint(request(0, [], checkpoint(2)));
    const [a, b] = await Promise.all([w.addCheckpoint(request(2, subproof(2, leaves(6), true), checkpoint(6))), w.addCheckpoint(request(2, subproof(2, leaves(4), true), checkpoint(4)))]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
  });

  it('pins a log under the prefix on first contact to the key it presents (named as the origin), and keeps it', async () => {
    const w = newWitness({ pinPrefix: 'gw.test/agw/' });
    expect((await w.addCheckpoint(request(0, [], checkpoint(3)))).status).toBe(404); // no key presented: unknown
    expect((await w.addCheckpoint(request(0, [], checkpoint(3)), logVkey)).status).toBe(200);
    // another key presented later changes nothing: the pinned key decides
    const otherPriv = createPrivateKey({ key: Buffer.concat([PKCS8, Buffer.alloc(32, 2)]), format: 'der', type: 'pkcs8' });
    const otherPub = Buffer.from(createPublicKey(otherPriv).export({ format: 'der', type: 'spki' })).subarray(-32);
    const otherVkey = `${ORIGIN}+${keyIdOf(ORIGIN, otherPub).toString('hex')}+${Buffer.concat([Buffer.from([1]), otherPub]).toString('base64')}`;
    expect((await w.addCheckpoint(request(3, subproof(3, leaves(5), true), checkpoint(5, undefined, ORIGIN, otherPriv, keyIdOf(ORIGIN, otherPub))), otherVkey)).status).toBe(403);
    expect((await w.addCheckpoint(request(3, subproof(3, leaves(5), true), checkpoint(5)))).status).toBe(200);
    // outside the prefix, or a key named otherwise: not pinned
    const outside = `elsewhere.test/log+${keyIdOf('elsewhere.test/log', logPub).toString('hex')}+${Buffer.concat([Buffer.from([1]), logPub]).toString('base64')}`;
    expect((await w.addCheckpoint(request(0, [], checkpoint(1, undefined, 'elsewhere.test/log')), outside)).status).toBe(404);
  });
});

describe('cosignatures (C2SP tlog-cosignature, Ed25519 cosignature/v1)', () => {
  it('verify by an independent reading of the spec: key id with 0x04, u64 timestamp, the cosignature/v1 message', async () => {
    const w = newWitness({ now: () => 1_679_315_147_000 });
    const note = checkpoint(5);
    const line = (await w.addCheckpoint(request(0, [], note))).body;
    const [, name, b64] = /^\u2014 (\S+) (\S+)\n$/.exec(line)!;
    const sig = Buffer.from(b64, 'base64');
    expect(name).toBe('witness.test/w1');
    expect(sig.subarray(0, 4)).toEqual(createHash('sha256').update(Buffer.concat([Buffer.from('witness.test/w1\n'), Buffer.from([4]), wkey.publicKey])).digest().subarray(0, 4));
    expect(sig.readBigUInt64BE(4)).toBe(1_679_315_147n);
    const text = note.slice(0, note.lastIndexOf('\n\n') + 1);
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), wkey.publicKey]), format: 'der', type: 'spki' });
    expect(verify(null, Buffer.from(`cosignature/v1\ntime 1679315147\n${text}`), spki, sig.subarray(12))).toBe(true);
    // and by the verifier's code, with the witness's published vkey
    expect(cosignatureTime(`${note}${line}`, parseCosignerKey(wkey.vkey))).toBe(1_679_315_147n);
  });

  it('the spec example: the cosignature line decodes to a key id, the timestamp 1679315147 and a 64-byte signature', () => {
    const sig = Buffer.from('jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==', 'base64');
    expect(sig.length).toBe(76);
    expect(sig.readBigUInt64BE(4)).toBe(1_679_315_147n);
  });

  it('a witness policy: k of n cosigners', async () => {
    const w2key = witnessKeyFromSeed('witness.test/w2', Buffer.alloc(32, 10));
    const w1 = newWitness();
    const w2 = new Witness({ key: w2key, store: new MemoryWitnessStore(), logs: new Map([[ORIGIN, [logKey]]]) });
    const note = checkpoint(3);
    const one = `${note}${(await w1.addCheckpoint(request(0, [], note))).body}`;
    const both = `${one}${(await w2.addCheckpoint(request(0, [], note))).body}`;
    const keys = [parseCosignerKey(wkey.vkey), parseCosignerKey(w2key.vkey)];
    expect(checkWitnessPolicy(one, keys, 1)).toMatchObject({ ok: true, missing: ['witness.test/w2'] });
    expect(checkWitnessPolicy(one, keys, 2).ok).toBe(false);
    expect(checkWitnessPolicy(both, keys, 2).ok).toBe(true);
    // a tampered cosignature is an error, not a missing one
    // a flipped character in the signature part (after the key id and the timestamp: base64 offset 16 on)
    const tampered = both.replace(/(\u2014 witness\.test\/w2 .{40})(.)/, (_m, p, c) => `${p}${c === 'A' ? 'B' : 'A'}`);
    expect(() => checkWitnessPolicy(tampered, keys, 2)).toThrow(/does not verify|not 76 bytes/);
  });

  it('keys round-trip through the private key file and the vkey', () => {
    const file = formatWitnessKeyFile(wkey.name, wkey.keyId, Buffer.alloc(32, 9));
    expect(file).toMatch(/^PRIVATE\+KEY\+witness\.test\/w1\+[0-9a-f]{8}\+BA/);
    expect(parseWitnessKeyFile(file).vkey).toBe(wkey.vkey);
    expect(parseCosignerKey(wkey.vkey).publicKey).toEqual(wkey.publicKey);
  });
});

describe("Go's golang.org/x/mod/sumdb/note test vectors (the reference signed-note implementation)", () => {
  // note_test.go, TestSign and TestOpen
  const skey = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
  const vkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const signed = `${text}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

  it('the verifier opens the note Go signed', () => {
    expect(openNote(signed, parseVerifierKey(vkey))).toBe(text);
  });

  it('the same seed gives the same public key and, Ed25519 being deterministic, the same signature bytes', () => {
    const seed = Buffer.from(skey.split('+').slice(4).join('+'), 'base64').subarray(1);
    const k = witnessKeyFromSeed('PeterNeumann', seed);
    expect(k.publicKey).toEqual(parseVerifierKey(vkey).publicKey);
    const priv = createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' });
    const sig = Buffer.concat([Buffer.from('c74f20a3', 'hex'), sign(null, Buffer.from(text), priv)]).toString('base64');
    expect(sig).toBe('x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=');
  });
});
