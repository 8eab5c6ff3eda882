/**
 * C2SP signed-note (https://c2sp.org/signed-note) verification with Ed25519 keys, and C2SP
 * tlog-checkpoint (https://c2sp.org/tlog-checkpoint) bodies. Nothing here signs.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';

export interface VerifierKey {
  name: string;
  keyId: Buffer;
  publicKey: Buffer;
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

export function keyIdOf(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256').update(Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, 0x01]), publicKey])).digest().subarray(0, 4);
}

/**
 * A verifier key `<name>+<8 hex key id>+<base64(type || 32-byte Ed25519 key)>` of one signature type
 * (0x01: a note signer; 0x04: a cosignature/v1 witness); the key id must recompute with `idOf`.
 */
export function parseEd25519Vkey(vkey: string, type: number, idOf: (name: string, publicKey: Buffer) => Buffer, what: string): VerifierKey {
  const s = vkey.trim();
  const a = s.indexOf('+');
  const b = s.indexOf('+', a + 1);
  if (a <= 0 || b < 0) throw new Error(`a ${what} is name+keyhash+base64`);
  const name = s.slice(0, a);
  const idHex = s.slice(a + 1, b);
  const data = Buffer.from(s.slice(b + 1), 'base64');
  if (/\s/.test(name)) throw new Error('a key name has no spaces');
  if (!/^[0-9a-fA-F]{8}$/.test(idHex)) throw new Error('the key hash is 8 hex digits');
  if (data.length !== 33 || data[0] !== type) throw new Error(`only Ed25519 ${what}s (type 0x${type.toString(16).padStart(2, '0')}, 32 bytes) are supported`);
  const publicKey = data.subarray(1);
  const keyId = idOf(name, publicKey);
  if (keyId.toString('hex') !== idHex.toLowerCase()) throw new Error('the key hash does not match the name and key');
  return { name, keyId, publicKey };
}

/** `<name>+<8 hex key id>+<base64(0x01 || 32-byte Ed25519 key)>`; the key id must recompute. */
export function parseVerifierKey(vkey: string): VerifierKey {
  return parseEd25519Vkey(vkey, 0x01, keyIdOf, 'verifier key');
}

/** The note text when a signature of `key` verifies; throws otherwise (signatures of other keys are ignored). */
export function openNote(note: string, key: VerifierKey): string {
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error('a signed note has no control characters other than newline');
  if (!note.endsWith('\n')) throw new Error('a signed note ends with a newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  const pub = createPublicKey({ key: Buffer.concat([SPKI_ED25519, key.publicKey]), format: 'der', type: 'spki' });
  let ok = false;
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) throw new Error('malformed signature line');
    const sig = Buffer.from(m[2], 'base64');
    if (m[1] !== key.name || sig.length < 4 || !sig.subarray(0, 4).equals(key.keyId)) continue;
    if (sig.length !== 68 || !verify(null, Buffer.from(text, 'utf8'), pub, sig.subarray(4))) throw new Error(`the signature of ${key.name} does not verify`);
    ok = true;
  }
  if (!ok) throw new Error(`no signature by the trusted key ${key.name}`);
  return text;
}

export interface CheckpointBody {
  origin: string;
  treeSize: number;
  rootHex: string;
}

export function parseCheckpoint(text: string): CheckpointBody {
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3 || lines.some((l) => l === '')) throw new Error('a checkpoint has at least three non-empty lines');
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new Error('the tree size is decimal without leading zeroes');
  const root = Buffer.from(lines[2], 'base64');
  if (root.length !== 32 || root.toString('base64') !== lines[2]) throw new Error('the root hash is the base64 of 32 bytes');
  return { origin: lines[0], treeSize: Number(lines[1]), rootHex: root.toString('hex') };
}
