/**
 * verifyReceipt on receipts made here with node:crypto (a tenant log key, a delegated receipt key, a tree of
 * three leaves and its signed checkpoint), independent of the services' code: a good receipt passes every
 * check; a tampered receipt, a tampered argument, a swapped proof, a wrong key and a pending proof past its
 * maximum merge delay each fail by name.
 */
import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';
import { keyIdOf, parseVerifierKey } from './signed-note';
import { type ReceiptFile, type ReceiptProofFile, verifyReceipt } from './verify-receipt';

const jcs = canonicalizeImpl as unknown as (v: unknown) => string;
const H = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafOf = (recordHash: Buffer) => H(Buffer.from([0]), recordHash);
const node = (l: Buffer, r: Buffer) => H(Buffer.from([1]), l, r);

function keyPair(name: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const keyId = keyIdOf(name, pub);
  const vkey = `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), pub]).toString('base64')}`;
  const signNote = (text: string) => `${text}\n\u2014 ${name} ${Buffer.concat([keyId, sign(null, Buffer.from(text, 'utf8'), privateKey)]).toString('base64')}\n`;
  return { vkey, signNote };
}

const origin = `localhost/agw/${randomUUID()}`;
const log = keyPair(origin);
const receiptKey = keyPair(`${origin}/receipt-key`);
const args = { path: '/etc/hosts', mode: 'read' };
const salt = randomBytes(16);
const argsHash = H(salt, Buffer.from(jcs(args), 'utf8')).toString('hex');
const records = [randomBytes(32), randomBytes(32), randomBytes(32)];
const leaves = records.map(leafOf);
// RFC 9162 tree of 3: root = node(node(l0, l1), l2); proof of leaf 1 = [l0, l2]
const root = node(node(leaves[0], leaves[1]), leaves[2]);
const checkpoint = log.signNote(`${origin}\n3\n${root.toString('base64')}\n`);
const time = new Date();

const delegation = (from: Date, to: Date, signer = log) =>
  signer.signNote(`agw-receipt-key/v1\norigin ${origin}\nkey ${receiptKey.vkey}\nnot-before ${from.toISOString()}\nnot-after ${to.toISOString()}\n`);
const receiptText = (o: { record?: number; leaf?: Buffer; decision?: string; time?: Date; mmd?: number } = {}) =>
  [
    'agw-receipt/v1',
    `origin ${origin}`,
    `record ${o.record ?? 2}`,
    `leaf ${(o.leaf ?? leaves[1]).toString('base64')}`,
    `decision ${o.decision ?? 'allow'}`,
    'tool files',
    'method read',
    `arguments ${argsHash}`,
    'definition -',
    'policy rev-7',
    'approver -',
    `time ${(o.time ?? time).toISOString()}`,
    `mmd ${o.mmd ?? 3600}`,
    '',
  ].join('\n');
const receipt = (o: Parameters<typeof receiptText>[0] = {}, key = delegation(new Date(time.getTime() - 60_000), new Date(time.getTime() + 86_400_000))): ReceiptFile => ({
  note: receiptKey.signNote(receiptText(o)),
  key,
  arguments_salt: salt.toString('base64'),
});
const merged: ReceiptProofFile = { status: 'merged', record_id: 2, leaf_index: 1, leaf_hash: leaves[1].toString('hex'), tree_size: 3, proof: [leaves[0], leaves[2]].map((b) => b.toString('hex')), checkpoint };
const key = parseVerifierKey(log.vkey);
const failures = (r: ReturnType<typeof verifyReceipt>) => r.results.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);

it('a receipt with its arguments and proof verifies', () => {
  const r = verifyReceipt({ receipt: receipt(), arguments: { mode: 'read', path: '/etc/hosts' }, proof: merged }, key);
  expect(failures(r)).toEqual([]);
  expect(r.results.map((c) => c.name)).toEqual(['verifier key', 'delegation', 'receipt signature', 'window', 'arguments', 'checkpoint signature', 'inclusion proof']);
});

it('a tampered receipt fails the receipt signature', () => {
  const good = receipt();
  const note = good.note.replace('decision allow', 'decision deny');
  expect(failures(verifyReceipt({ receipt: { ...good, note } }, key))).toEqual([expect.stringMatching(/^receipt signature: the signature of .* does not verify/)]);
});

it('a tampered argument fails the arguments check', () => {
  expect(failures(verifyReceipt({ receipt: receipt(), arguments: { ...args, path: '/etc/shadow' } }, key))).toEqual([expect.stringMatching(/^arguments: SHA-256\(salt \|\| JCS\(arguments\)\) is/)]);
});

it('a proof of another record, or a proof that does not reach the root, fails the inclusion proof', () => {
  const other: ReceiptProofFile = { ...merged, record_id: 3, leaf_index: 2, leaf_hash: leaves[2].toString('hex'), proof: [node(leaves[0], leaves[1]).toString('hex')] };
  expect(failures(verifyReceipt({ receipt: receipt(), proof: other }, key))).toEqual([expect.stringMatching(/^inclusion proof: the proof is for record 3/)]);
  const swapped = { ...merged, proof: [...merged.proof!].reverse() };
  expect(failures(verifyReceipt({ receipt: receipt(), proof: swapped }, key))).toEqual([expect.stringMatching(/^inclusion proof: the proof does not lead/)]);
});

it('a checkpoint signed by another key fails the checkpoint signature', () => {
  const forged = keyPair(origin).signNote(`${origin}\n3\n${root.toString('base64')}\n`);
  expect(failures(verifyReceipt({ receipt: receipt(), proof: { ...merged, checkpoint: forged } }, key))).toEqual([expect.stringMatching(/^checkpoint signature: no signature by the trusted key/)]);
});

it('a wrong key fails the delegation: another log key, or a delegation signed by someone else', () => {
  const other = keyPair(origin);
  expect(failures(verifyReceipt({ receipt: receipt() }, parseVerifierKey(other.vkey)))).toEqual([expect.stringMatching(/^delegation: no signature by the trusted key/)]);
  const selfDelegated = receipt({}, delegation(new Date(0), new Date(time.getTime() + 1000), other));
  expect(failures(verifyReceipt({ receipt: selfDelegated }, key))).toEqual([expect.stringMatching(/^delegation: /)]);
});

it('a receipt time outside the delegation window fails the window', () => {
  const r = receipt({}, delegation(new Date(time.getTime() + 1000), new Date(time.getTime() + 2000)));
  expect(failures(verifyReceipt({ receipt: r }, key))).toEqual([expect.stringMatching(/^window: /)]);
});

it('a pending proof: fine before time + mmd, misbehaviour after', () => {
  const pending: ReceiptProofFile = { status: 'pending', record_id: 2, leaf_index: 1, leaf_hash: leaves[1].toString('hex') };
  expect(failures(verifyReceipt({ receipt: receipt(), proof: pending, now: new Date(time.getTime() + 60_000) }, key))).toEqual([]);
  expect(failures(verifyReceipt({ receipt: receipt(), proof: pending, now: new Date(time.getTime() + 3601_000) }, key))).toEqual([
    expect.stringMatching(/^inclusion proof: misbehaviour: not merged within the maximum merge delay/),
  ]);
});
