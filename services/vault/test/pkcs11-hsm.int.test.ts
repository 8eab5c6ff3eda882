/** The PKCS#11 backend against the real SoftHSM2 token (no mocks). */
import { randomUUID } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import { createHsm } from '../src/hsm/create-hsm';
import { DecryptionFailedError, type HsmBackend, KeyMissingError } from '../src/hsm/hsm-backend';
import { softHsmTokenLabels } from '../src/hsm/softhsm-token';
import { testConfig, withTestToken } from './helpers';

let hsm: HsmBackend;
const config = testConfig();

beforeAll(() => {
  hsm = createHsm(config);
});
afterAll(async () => {
  await hsm.close();
});

describe('Pkcs11Hsm on SoftHSM2', () => {
  test('the token was initialised in the project-owned directory, once', () => {
    expect(config.softhsmConf).toMatch(/\.run\/softhsm\/softhsm2\.conf$/);
    expect(softHsmTokenLabels(config.softhsmConf).filter((l) => l === 'agw-test')).toHaveLength(1);
  });

  test('AES-256-GCM round trip; the AAD binds the ciphertext; a tampered tag fails', async () => {
    const label = `test:${randomUUID()}`;
    expect(await hsm.ensureKey(label, 'aes')).toBe(true);
    expect(await hsm.ensureKey(label, 'aes')).toBe(false);
    const sealed = await hsm.encrypt(label, Buffer.from('secret text'), Buffer.from('tenant-a|subject-1'));
    expect(sealed.alg).toBe('AES-256-GCM');
    expect(Buffer.from(sealed.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(sealed.tag, 'base64')).toHaveLength(16);
    expect(Buffer.from(sealed.ct, 'base64').toString()).not.toContain('secret');
    expect((await hsm.decrypt(label, sealed, Buffer.from('tenant-a|subject-1'))).toString()).toBe('secret text');
    await expect(hsm.decrypt(label, sealed, Buffer.from('tenant-b|subject-1'))).rejects.toBeInstanceOf(DecryptionFailedError);
    const tag = Buffer.from(sealed.tag, 'base64');
    tag[0] ^= 1;
    await expect(hsm.decrypt(label, { ...sealed, tag: tag.toString('base64') }, Buffer.from('tenant-a|subject-1'))).rejects.toBeInstanceOf(DecryptionFailedError);
    // fresh IV per encryption
    expect((await hsm.encrypt(label, Buffer.from('secret text'), Buffer.from('x'))).iv).not.toBe(sealed.iv);
    await hsm.destroyKey(label);
  });

  test('keys are generated inside the token as sensitive and non-extractable', async () => {
    const label = `test:${randomUUID()}`;
    await hsm.ensureKey(label, 'aes');
    // inspect the object through a second PKCS#11 session, as any application could
    withTestToken((p11, session) => {
      // the application is logged in already (login state is per process in PKCS#11)
      p11.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: label }]);
      const [obj] = p11.C_FindObjects(session, 2);
      p11.C_FindObjectsFinal(session);
      const attrs = p11.C_GetAttributeValue(session, obj, [
        { type: pkcs11js.CKA_EXTRACTABLE },
        { type: pkcs11js.CKA_SENSITIVE },
        { type: pkcs11js.CKA_TOKEN },
        { type: pkcs11js.CKA_VALUE_LEN },
        { type: pkcs11js.CKA_KEY_TYPE },
      ]);
      const [extractable, sensitive, token, len, keyType] = attrs.map((a) => a.value as Buffer);
      expect(extractable[0]).toBe(0);
      expect(sensitive[0]).toBe(1);
      expect(token[0]).toBe(1);
      expect(len.readUInt32LE(0)).toBe(32);
      expect(keyType.readUInt32LE(0)).toBe(pkcs11js.CKK_AES);
      // the key value cannot be read
      expect(() => p11.C_GetAttributeValue(session, obj, [{ type: pkcs11js.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
    });
    await hsm.destroyKey(label);
  });

  test('HMAC-SHA-256 inside the HSM is deterministic per key', async () => {
    const a = `test:${randomUUID()}`;
    const b = `test:${randomUUID()}`;
    await hsm.ensureKey(a, 'hmac');
    await hsm.ensureKey(b, 'hmac');
    const x1 = await hsm.hmac(a, Buffer.from('email:ada@example.com'));
    expect(x1).toHaveLength(32);
    expect((await hsm.hmac(a, Buffer.from('email:ada@example.com'))).equals(x1)).toBe(true);
    expect((await hsm.hmac(b, Buffer.from('email:ada@example.com'))).equals(x1)).toBe(false);
    await hsm.destroyKey(a);
    await hsm.destroyKey(b);
  });

  test('a destroyed key is gone for good (C_DestroyObject)', async () => {
    const label = `test:${randomUUID()}`;
    await hsm.ensureKey(label, 'aes');
    const sealed = await hsm.encrypt(label, Buffer.from('x'), Buffer.alloc(0));
    expect(await hsm.destroyKey(label)).toBe(1);
    expect(await hsm.keyExists(label)).toBe(false);
    await expect(hsm.decrypt(label, sealed, Buffer.alloc(0))).rejects.toBeInstanceOf(KeyMissingError);
    expect(await hsm.destroyKey(label)).toBe(0);
  });
});
