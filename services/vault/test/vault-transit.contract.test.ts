/**
 * Contract of the HashiCorp Vault Transit backend: the same behaviour the PKCS#11 backend shows.
 * Runs only when VAULT_ADDR (and VAULT_TOKEN) point at a Vault with the Transit engine mounted
 * (VAULT_TRANSIT_MOUNT, default `transit`); no Vault server can run on the developer machines.
 */
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { DecryptionFailedError, KeyMissingError } from '../src/hsm/hsm-backend';
import { VaultTransitHsm } from '../src/hsm/vault-transit-hsm';

const addr = process.env.VAULT_ADDR;
const maybe = addr ? describe : describe.skip;

maybe('VaultTransitHsm (contract, needs VAULT_ADDR)', () => {
  const hsm = new VaultTransitHsm({ endpoint: addr ?? '', token: process.env.VAULT_TOKEN ?? '', mount: process.env.VAULT_TRANSIT_MOUNT ?? 'transit' });

  test('aes256-gcm96 round trip bound to the AAD; destroy is final', async () => {
    const label = `agw:contract:${randomUUID()}`;
    expect(await hsm.ensureKey(label, 'aes')).toBe(true);
    expect(await hsm.ensureKey(label, 'aes')).toBe(false);
    const sealed = await hsm.encrypt(label, Buffer.from('secret'), Buffer.from('tenant|subject'));
    expect(sealed.ct).toMatch(/^vault:v\d+:/);
    expect((await hsm.decrypt(label, sealed, Buffer.from('tenant|subject'))).toString()).toBe('secret');
    await expect(hsm.decrypt(label, sealed, Buffer.from('other|subject'))).rejects.toBeInstanceOf(DecryptionFailedError);
    expect(await hsm.destroyKey(label)).toBe(1);
    expect(await hsm.keyExists(label)).toBe(false);
    await expect(hsm.decrypt(label, sealed, Buffer.from('tenant|subject'))).rejects.toBeInstanceOf(KeyMissingError);
  });

  test('ed25519 keys: one key, pure Ed25519 signatures that verify with its public key', async () => {
    const label = `agw:contract:${randomUUID()}`;
    const { publicKey, created } = await hsm.ensureEd25519Key(label);
    expect(created).toBe(true);
    expect((await hsm.ensureEd25519Key(label)).publicKey.equals(publicKey)).toBe(true);
    const data = Buffer.from('origin\n1\nroot\n');
    const sig = await hsm.signEd25519(label, data);
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
    expect(verify(null, data, spki, sig)).toBe(true);
    await hsm.destroyKey(label);
  });

  test('HMAC keys are deterministic', async () => {
    const label = `agw:contract:${randomUUID()}`;
    await hsm.ensureKey(label, 'hmac');
    const a = await hsm.hmac(label, Buffer.from('email:a@example.com'));
    expect(a).toHaveLength(32);
    expect((await hsm.hmac(label, Buffer.from('email:a@example.com'))).equals(a)).toBe(true);
    await hsm.destroyKey(label);
  });
});

test('the transit contract is skipped without VAULT_ADDR', () => {
  expect(typeof VaultTransitHsm).toBe('function');
});
