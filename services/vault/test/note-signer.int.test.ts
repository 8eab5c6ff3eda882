/**
 * Signed checkpoints from the HSM-held Ed25519 key (SoftHSM2, CKM_EDDSA), checked by an independent
 * verifier written here from the C2SP texts (https://c2sp.org/signed-note, https://c2sp.org/tlog-checkpoint),
 * not from the signing code: the note is split at its last blank line, signature lines are
 * "— <key name> base64(4-byte key ID || signature)", the key ID is SHA-256(name || 0x0A || 0x01 || key)[:4],
 * a verifier key is "<name>+<hex key ID>+base64(0x01 || key)", and a checkpoint body is origin, decimal size
 * without leading zeroes, base64 root.
 */
import crypto, { randomUUID } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import { createHsm } from '../src/hsm/create-hsm';
import type { HsmBackend } from '../src/hsm/hsm-backend';
import { EVIDENCE_KEY_LABEL, NoteSigner } from '../src/signing/note-signer';
import { testConfig, withTestToken } from './helpers';

// ---- the independent verifier (from the spec text only) ----
interface Vkey {
  name: string;
  id: Buffer;
  pub: Buffer;
}
function parseVkey(vkey: string): Vkey {
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  const name = vkey.slice(0, first);
  const idHex = vkey.slice(first + 1, second);
  const data = Buffer.from(vkey.slice(second + 1), 'base64');
  if (!/^[0-9a-f]{8}$/i.test(idHex) || data.length !== 33 || data[0] !== 0x01) throw new Error('not an Ed25519 vkey');
  const pub = data.subarray(1);
  const id = crypto.createHash('sha256').update(Buffer.concat([Buffer.from(name), Buffer.from([0x0a, 0x01]), pub])).digest().subarray(0, 4);
  if (id.toString('hex') !== idHex.toLowerCase()) throw new Error('vkey hash does not match');
  return { name, id, pub };
}
function openNote(note: string, key: Vkey): string {
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error('control character');
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('malformed note');
  const text = note.slice(0, split + 1);
  const sigLines = note.slice(split + 2, -1).split('\n');
  let verified = false;
  for (const line of sigLines) {
    const m = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!m) throw new Error('malformed signature line');
    const raw = Buffer.from(m[2], 'base64');
    if (m[1] !== key.name || !raw.subarray(0, 4).equals(key.id)) continue; // unknown key: ignored
    const spki = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key.pub]), format: 'der', type: 'spki' });
    if (!crypto.verify(null, Buffer.from(text, 'utf8'), spki, raw.subarray(4))) throw new Error('signature does not verify');
    verified = true;
  }
  if (!verified) throw new Error('no signature from a known key');
  return text;
}
function parseCheckpoint(text: string, origin: string): { size: number; root: Buffer } {
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3 || lines[0] !== origin) throw new Error('wrong origin');
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new Error('bad size');
  const root = Buffer.from(lines[2], 'base64');
  if (root.length !== 32) throw new Error('bad root');
  return { size: Number(lines[1]), root };
}

// ---- the tests ----
let hsm: HsmBackend;
let signer: NoteSigner;
const tenant = randomUUID();

beforeAll(() => {
  hsm = createHsm(testConfig());
  signer = new NoteSigner(hsm, 'agw.example.test');
});
afterAll(async () => {
  await hsm.close();
});

const root = crypto.createHash('sha256').update('some tree').digest();
const text = (origin: string, size: number | string, r: Buffer | string = root) => `${origin}\n${size}\n${typeof r === 'string' ? r : r.toString('base64')}\n`;

describe('NoteSigner (Ed25519 in the HSM) against an independent C2SP verifier', () => {
  test('a checkpoint verifies with the published vkey; origin = key name = <host>/agw/<tenant>', async () => {
    const key = await signer.keyInfo(tenant);
    expect(key.keyName).toBe(`agw.example.test/agw/${tenant}`);
    const vkey = parseVkey(key.vkey);
    const signed = await signer.sign(tenant, text(key.keyName, 42));
    const body = parseCheckpoint(openNote(signed.note, vkey), key.keyName);
    expect(body).toEqual({ size: 42, root });
  });

  test('tampered size, root, signature and a wrong key are all rejected', async () => {
    const key = await signer.keyInfo(tenant);
    const vkey = parseVkey(key.vkey);
    const { note } = await signer.sign(tenant, text(key.keyName, 42));
    expect(() => openNote(note.replace('\n42\n', '\n43\n'), vkey)).toThrow('signature does not verify');
    const otherRoot = crypto.createHash('sha256').update('another tree').digest().toString('base64');
    expect(() => openNote(note.replace(root.toString('base64'), otherRoot), vkey)).toThrow('signature does not verify');
    const sig = note.slice(note.lastIndexOf(' ') + 1, -1);
    const raw = Buffer.from(sig, 'base64');
    raw[10] ^= 0x01;
    expect(() => openNote(note.replace(sig, raw.toString('base64')), vkey)).toThrow('signature does not verify');
    // a key that is not ours (same name, another Ed25519 key): its key ID differs, so no known signature
    const other = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    const otherId = crypto.createHash('sha256').update(Buffer.concat([Buffer.from(key.keyName), Buffer.from([0x0a, 0x01]), other])).digest().subarray(0, 4);
    expect(() => openNote(note, { name: key.keyName, id: otherId, pub: other })).toThrow('no signature from a known key');
    // same name and key ID but the wrong public key: the signature fails
    expect(() => openNote(note, { ...vkey, pub: other })).toThrow('signature does not verify');
    // another tenant's key name: its key ID differs, the note is not accepted
    const otherTenant = parseVkey((await signer.keyInfo(randomUUID())).vkey);
    expect(() => openNote(note, otherTenant)).toThrow('no signature from a known key');
  });

  test('refuses to be a signing oracle: other origins, malformed checkpoints, arbitrary text', async () => {
    const key = await signer.keyInfo(tenant);
    await expect(signer.sign(tenant, text(`agw.example.test/agw/${randomUUID()}`, 1))).rejects.toThrow(/only checkpoints/);
    await expect(signer.sign(tenant, text(key.keyName, '042'))).rejects.toThrow(/leading zeroes/);
    await expect(signer.sign(tenant, text(key.keyName, 1, 'AAAA'))).rejects.toThrow(/32 bytes/);
    await expect(signer.sign(tenant, `${text(key.keyName, 1)}extension\n`)).rejects.toThrow(/three lines/);
    await expect(signer.sign(tenant, 'hello world\n')).rejects.toThrow(/only checkpoints/);
    await expect(signer.sign(tenant, `agw-erasure-statement/v1\norigin ${key.keyName}\nsubject_id sub_1\n`)).resolves.toMatchObject({ keyName: key.keyName });
    await expect(signer.sign(tenant, `agw-erasure-statement/v1\norigin someone.else/agw/x\nsubject_id sub_1\n`)).rejects.toThrow(/origin/);
  });

  test('signs a receipt key delegation of the tenant\'s origin, and nothing like it for another origin or key name', async () => {
    const key = await signer.keyInfo(tenant);
    const pub = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    const vkeyOf = (name: string) => `${name}+${crypto.createHash('sha256').update(Buffer.concat([Buffer.from(name), Buffer.from([0x0a, 0x01]), pub])).digest().subarray(0, 4).toString('hex')}+${Buffer.concat([Buffer.from([1]), pub]).toString('base64')}`;
    const delegation = (origin: string, name = `${origin}/receipt-key`, to = '2026-11-30T00:00:00.000Z') =>
      `agw-receipt-key/v1\norigin ${origin}\nkey ${vkeyOf(name)}\nnot-before 2026-11-29T00:00:00.000Z\nnot-after ${to}\n`;
    const { note } = await signer.sign(tenant, delegation(key.keyName));
    expect(openNote(note, parseVkey(key.vkey))).toBe(delegation(key.keyName));
    await expect(signer.sign(tenant, delegation(`agw.example.test/agw/${randomUUID()}`))).rejects.toThrow(/receipt key delegation/);
    // a key named like the log key itself would let the delegated key sign checkpoints: refused
    await expect(signer.sign(tenant, delegation(key.keyName, key.keyName))).rejects.toThrow(/receipt key delegation/);
    await expect(signer.sign(tenant, delegation(key.keyName, undefined, '2026-11-28T00:00:00.000Z'))).rejects.toThrow(/receipt key delegation/);
  });

  test('the private key is on the token, sensitive and not extractable; CKM_EDDSA is what signs', () => {
    withTestToken((p11, s, slot) => {
      expect(p11.C_GetMechanismList(slot)).toEqual(expect.arrayContaining([0x1055, 0x1057]));
      p11.C_FindObjectsInit(s, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_LABEL, value: EVIDENCE_KEY_LABEL },
      ]);
      const found = p11.C_FindObjects(s, 2);
      p11.C_FindObjectsFinal(s);
      // (the backend's login in this process covers this session: PKCS#11 login state is per application)
      expect(found).toHaveLength(1);
      const [sensitive, extractable] = p11.C_GetAttributeValue(s, found[0], [{ type: pkcs11js.CKA_SENSITIVE }, { type: pkcs11js.CKA_EXTRACTABLE }]);
      expect((sensitive.value as Buffer)[0]).toBe(1);
      expect((extractable.value as Buffer)[0]).toBe(0);
      expect(() => p11.C_GetAttributeValue(s, found[0], [{ type: pkcs11js.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
    });
  });
});
