/** Sealed service secrets (webhook signing secrets) with the keyring of a vault started in-process (test/support/start-vault.ts), against the real Postgres and SoftHSM2 token. */
import { randomBytes, randomUUID } from 'node:crypto';
import { InputError } from '@agw/shared';
import { credentialsKeyId } from '../src/keys/keyring';
import { ServiceSecrets } from '../src/secrets/service-secrets';
import { type StartedVault, startVault } from './support/start-vault';

let vault: StartedVault;
let secrets: ServiceSecrets;

beforeAll(async () => {
  vault = await startVault();
  secrets = new ServiceSecrets(vault.api.keyring);
});
afterAll(() => vault?.close());

const input = (e: unknown) => (e instanceof InputError ? e.issues[0] : e);

test('a webhook secret seals by the tenant credentials key and opens back; the sealed form holds no plaintext', async () => {
  const tenant = randomUUID();
  const plain = `whsec_${randomBytes(24).toString('base64url')}`;
  const sealed = await secrets.seal(tenant, 'webhook_secret', plain);
  expect(sealed).not.toContain(plain);
  expect(JSON.parse(sealed)).toMatchObject({ v: 1, key_id: credentialsKeyId(tenant), alg: expect.any(String), iv: expect.any(String), ct: expect.any(String), tag: expect.any(String) });
  expect(await secrets.open(tenant, 'webhook_secret', sealed)).toBe(plain);
  // sealed twice: different ciphertexts (fresh IV), same secret
  const again = await secrets.seal(tenant, 'webhook_secret', plain);
  expect(again).not.toBe(sealed);
  expect(await secrets.open(tenant, 'webhook_secret', again)).toBe(plain);
});

test('a sealed secret does not open for another tenant, another purpose, or when altered; bad input is a precise 422', async () => {
  const a = randomUUID();
  const b = randomUUID();
  const sealed = await secrets.seal(a, 'webhook_secret', 'whsec_for_tenant_a_only_0123456789');
  await expect(secrets.open(b, 'webhook_secret', sealed).catch(input)).resolves.toMatchObject({ loc: ['sealed_json'], msg: expect.stringContaining('not this tenant') });
  await expect(secrets.open(a, 'other', sealed).catch(input)).resolves.toMatchObject({ loc: ['purpose'], type: 'enum' });
  const s = JSON.parse(sealed) as { ct: string };
  const flipped = Buffer.from(s.ct, 'base64');
  flipped[0] ^= 1;
  const altered = JSON.stringify({ ...s, ct: flipped.toString('base64') });
  await expect(secrets.open(a, 'webhook_secret', altered).catch(input)).resolves.toMatchObject({ loc: ['sealed_json'], msg: expect.stringContaining('does not open') });
  await expect(secrets.open(a, 'webhook_secret', 'not json').catch(input)).resolves.toMatchObject({ loc: ['sealed_json'], type: 'json_invalid' });
  await expect(secrets.seal(a, 'webhook_secret', '').catch(input)).resolves.toMatchObject({ loc: ['plaintext'] });
});
