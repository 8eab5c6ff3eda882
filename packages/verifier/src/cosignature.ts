/**
 * C2SP tlog-cosignature (https://c2sp.org/tlog-cosignature), the Ed25519 form `cosignature/v1`: a witness's
 * note signature line on a checkpoint, `— <name> base64(key id || u64 big-endian timestamp || Ed25519
 * signature)`, key id `SHA-256(<name> || "\n" || 0x04 || public key)[:4]`, signed message
 * `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint's note text. And a witness policy: a
 * checkpoint counts as witnessed when at least `quorum` of the listed witnesses cosigned it.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { parseEd25519Vkey } from './signed-note';

export interface CosignerKey {
  name: string;
  keyId: Buffer;
  publicKey: Buffer;
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
export const COSIGNATURE_V1_TYPE = 0x04;

export function cosignerKeyIdOf(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256').update(Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, COSIGNATURE_V1_TYPE]), publicKey])).digest().subarray(0, 4);
}

/** `<name>+<8 hex key id>+<base64(0x04 || 32-byte Ed25519 key)>` (a vkey of signature type 0x04); the id must recompute. */
export function parseCosignerKey(vkey: string): CosignerKey {
  return parseEd25519Vkey(vkey, COSIGNATURE_V1_TYPE, cosignerKeyIdOf, 'witness key');
}

export const cosignerVkey = (name: string, publicKey: Buffer): string =>
  `${name}+${cosignerKeyIdOf(name, publicKey).toString('hex')}+${Buffer.concat([Buffer.from([COSIGNATURE_V1_TYPE]), publicKey]).toString('base64')}`;

/** The message a cosignature/v1 signs: the header, the time line, then the checkpoint's note text. */
export const cosignedMessage = (noteText: string, timestamp: bigint): Buffer => Buffer.from(`cosignature/v1\ntime ${timestamp}\n${noteText}`, 'utf8');

/** The note text (up to and with the newline before the blank line) and its signature lines. */
export function splitNote(note: string): { text: string; lines: string[] } {
  if (!note.endsWith('\n')) throw new Error('a signed note ends with a newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('no blank line before the signatures');
  return { text: note.slice(0, split + 1), lines: note.slice(split + 2, -1).split('\n') };
}

/**
 * The timestamp of `key`'s valid cosignature on the note, or null when the note has none by that key.
 * Throws when a line names the key (name and key id) but its signature does not verify (a malformed note).
 */
export function cosignatureTime(note: string, key: CosignerKey): bigint | null {
  const { text, lines } = splitNote(note);
  const pub = createPublicKey({ key: Buffer.concat([SPKI_ED25519, key.publicKey]), format: 'der', type: 'spki' });
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) throw new Error('malformed signature line');
    const sig = Buffer.from(m[2], 'base64');
    if (m[1] !== key.name || sig.length < 4 || !sig.subarray(0, 4).equals(key.keyId)) continue;
    if (sig.length !== 4 + 8 + 64) throw new Error(`the cosignature of ${key.name} is not 76 bytes`);
    const timestamp = sig.readBigUInt64BE(4);
    if (!verify(null, cosignedMessage(text, timestamp), pub, sig.subarray(12))) throw new Error(`the cosignature of ${key.name} does not verify`);
    return timestamp;
  }
  return null;
}

export interface WitnessPolicyResult {
  ok: boolean;
  /** the witnesses whose cosignature verified, with its time (seconds) */
  cosigned: Array<{ name: string; time: number }>;
  missing: string[];
  quorum: number;
}

/** Whether at least `quorum` of `witnesses` cosigned the note (each counted once). */
export function checkWitnessPolicy(note: string, witnesses: CosignerKey[], quorum: number): WitnessPolicyResult {
  const cosigned: WitnessPolicyResult['cosigned'] = [];
  const missing: string[] = [];
  for (const w of witnesses) {
    const t = cosignatureTime(note, w);
    if (t === null) missing.push(w.name);
    else cosigned.push({ name: w.name, time: Number(t) });
  }
  return { ok: cosigned.length >= quorum, cosigned, missing, quorum };
}
