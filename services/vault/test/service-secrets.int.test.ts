/**
 * Sealed service secrets (webhook signing secrets) with the keyring of a vault started in-process
 * (test/support/start-vault.ts), against the real Postgres and SoftHSM2 token, through the stored form the
 * callers keep (@agw/shared sealed-values.ts), as the gateway and the webhook service do.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { InputError, sealedSecretOf, sealedSecretText } from '@agw/shared';
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
/** sealed and kept as the callers keep it */
const sealText = async (tenant: string, purpose: string, plain: string) => sealedSecretText(await secrets.seal(tenant, purpose, plain));
const openText = async (tenant: string, purpose: string, stored: string) => secrets.open(tenant, purpose, sealedSecretOf(stored));

test('a webhook secret seals by the tenant credentials key and opens back; the stored form is the v1 JSON and holds no plaintext', async () => {
  const tenant = randomUUID();
  const plain = `whsec_${randomBytes(24).toString('base64url')}`;
  const sealed = await sealText(tenant, 'webhook_secret', plain);
  expect(sealed).not.toContain(plain);
  const parsed = JSON.parse(sealed);
  expect(parsed).toMatchObject({ v: 1, key_id: credentialsKeyId(tenant), alg: expect.any(String), iv: expect.any(String), ct: expect.any(String), tag: expect.any(String) });
  // exactly these keys in this order: what was stored before the sealed secret was a message
  expect(sealed).toBe(JSON.stringify({ v: 1, key_id: parsed.key_id, alg: parsed.alg, iv: parsed.iv, ct: parsed.ct, tag: parsed.tag }));
  expect(await openText(tenant, 'webhook_secret', sealed)).toBe(plain);
  // sealed twice: different ciphertexts (fresh IV), same secret
  const again = await sealText(tenant, 'webhook_secret', plain);
  expect(again).not.toBe(sealed);
  expect(await openText(tenant, 'webhook_secret', again)).toBe(plain);
});

test('a sealed secret does not open for another tenant, another purpose, or when altered; bad input is a precise 422', async () => {
  const a = randomUUID();
  const b = randomUUID();
  const sealed = await sealText(a, 'webhook_secret', 'whsec_for_tenant_a_only_0123456789');
  await expect(openText(b, 'webhook_secret', sealed).catch(input)).resolves.toMatchObject({ loc: ['sealed'], msg: expect.stringContaining('not this tenant') });
  await expect(openText(a, 'other', sealed).catch(input)).resolves.toMatchObject({ loc: ['purpose'], type: 'enum' });
  const s = JSON.parse(sealed) as { ct: string };
  const flipped = Buffer.from(s.ct, 'base64');
  flipped[0] ^= 1;
  const altered = JSON.stringify({ ...s, ct: flipped.toString('base64') });
  await expect(openText(a, 'webhook_secret', altered).catch(input)).resolves.toMatchObject({ loc: ['sealed'], msg: expect.stringContaining('does not open') });
  await expect(openText(a, 'webhook_secret', 'not json').catch(input)).resolves.toMatchObject({ loc: ['sealed'], type: 'json_invalid' });
  await expect(secrets.open(a, 'webhook_secret', undefined).catch(input)).resolves.toMatchObject({ loc: ['sealed'], msg: 'not a sealed secret (v1)' });
  await expect(secrets.seal(a, 'webhook_secret', '').catch(input)).resolves.toMatchObject({ loc: ['plaintext'] });
});
