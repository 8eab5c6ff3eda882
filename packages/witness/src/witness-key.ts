/**
 * The witness's Ed25519 key (C2SP tlog-cosignature, cosignature/v1): kept in a file in the form Go's
 * `golang.org/x/mod/sumdb/note` and transparency-dev use for private keys,
 * `PRIVATE+KEY+<name>+<8 hex key id>+base64(0x04 || 32-byte seed)`, and published as a vkey of type 0x04.
 */
import { createPrivateKey, createPublicKey, randomBytes, sign } from 'node:crypto';
import { COSIGNATURE_V1_TYPE, cosignedMessage, cosignerKeyIdOf, cosignerVkey } from '@agw/verifier';

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface WitnessKey {
  name: string;
  keyId: Buffer;
  publicKey: Buffer;
  /** the verifier key others configure: `<name>+<id>+base64(0x04 || public key)` */
  vkey: string;
  /** one cosignature line on a checkpoint's note text, at `timestamp` (seconds) */
  cosign(noteText: string, timestamp: bigint): string;
}

export function witnessKeyFromSeed(name: string, seed: Buffer): WitnessKey {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  if (!name || /[\s+]/.test(name)) throw new Error('a witness name has no spaces or plus signs');
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = Buffer.from(createPublicKey(priv).export({ format: 'der', type: 'spki' })).subarray(-32);
  const keyId = cosignerKeyIdOf(name, publicKey);
  return {
    name,
    keyId,
    publicKey,
    vkey: cosignerVkey(name, publicKey),
    cosign(noteText, timestamp) {
      const ts = Buffer.alloc(8);
      ts.writeBigUInt64BE(timestamp);
      const signature = sign(null, cosignedMessage(noteText, timestamp), priv);
      return `\u2014 ${name} ${Buffer.concat([keyId, ts, signature]).toString('base64')}\n`;
    },
  };
}

/** The private key file's text for `name` with a new random seed. */
export function newWitnessKeyFile(name: string): string {
  const seed = randomBytes(32);
  return formatWitnessKeyFile(name, witnessKeyFromSeed(name, seed).keyId, seed);
}

export function formatWitnessKeyFile(name: string, keyId: Buffer, seed: Buffer): string {
  return `PRIVATE+KEY+${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([COSIGNATURE_V1_TYPE]), seed]).toString('base64')}\n`;
}

export function parseWitnessKeyFile(text: string): WitnessKey {
  // the base64 may hold '+': the fields are the first four separators apart
  const m = /^PRIVATE\+KEY\+([^+\s]+)\+([0-9a-fA-F]{8})\+([A-Za-z0-9+/=]+)$/.exec(text.trim());
  if (!m) throw new Error('a witness key file is PRIVATE+KEY+<name>+<key id>+<base64(0x04 || seed)>');
  const [, name, idHex, b64] = m;
  const data = Buffer.from(b64, 'base64');
  if (data.length !== 33 || data[0] !== COSIGNATURE_V1_TYPE) throw new Error('the key is not an Ed25519 cosignature/v1 key (type 0x04, 32-byte seed)');
  const key = witnessKeyFromSeed(name, data.subarray(1));
  if (key.keyId.toString('hex') !== idHex.toLowerCase()) throw new Error('the key id does not match the name and key');
  return key;
}
