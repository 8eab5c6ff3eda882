/**
 * A tenant's service secrets (the webhook signing secret, the SIEM collector's token) sealed at rest: the owner of the
 * setting (the gateway) stores the sealed form, the service that needs the plaintext (the webhook signer)
 * opens it here. Sealed by the tenant's credentials key inside the HSM (AES-256-GCM) with the AAD
 * `agw:secret:v1|<tenant>|<purpose>`, so a sealed value copied to another tenant or purpose does not open.
 * Transport-free; the plaintext is never logged.
 */
import type { vault } from '@agw/proto';
import { InputError, checkSealedSecret, sealedSecret } from '@agw/shared';
import { DecryptionFailedError, KeyMissingError } from '../hsm/hsm-backend';
import { type Keyring, credentialsKeyId } from '../keys/keyring';

export const SECRET_PURPOSES = ['webhook_secret', 'siem_token', 'sso_client_secret'] as const;
export type SecretPurpose = (typeof SECRET_PURPOSES)[number];

const aad = (tenantId: string, purpose: string) => `agw:secret:v1|${tenantId}|${purpose}`;

function purposeOf(p: string): SecretPurpose {
  if (!(SECRET_PURPOSES as readonly string[]).includes(p)) throw InputError.at(['purpose'], `purpose must be one of ${SECRET_PURPOSES.join(', ')}`, 'enum');
  return p as SecretPurpose;
}

export class ServiceSecrets {
  constructor(private readonly keyring: Keyring) {}

  /** The secret sealed (agw.vault.v1.SealedSecret; the caller stores its JSON form, @agw/shared sealed-values.ts). */
  async seal(tenantId: string, purpose: string, plaintext: string): Promise<vault.SealedSecret> {
    const p = purposeOf(purpose);
    if (!plaintext || plaintext.length > 4096) throw InputError.at(['plaintext'], 'plaintext must be 1-4096 characters', 'string_too_long');
    const keyId = credentialsKeyId(tenantId);
    await this.keyring.ensure(tenantId, keyId, 'credentials');
    const { alg, iv, ct, tag } = await this.keyring.seal(keyId, Buffer.from(plaintext, 'utf8'), aad(tenantId, p));
    return sealedSecret({ v: 1, key_id: keyId, alg, iv, ct, tag });
  }

  async open(tenantId: string, purpose: string, sealed: vault.SealedSecret | undefined): Promise<string> {
    const p = purposeOf(purpose);
    const s = checkSealedSecret(sealed);
    // the key named inside the sealed value must be this tenant's: a value of another tenant never opens here
    if (s.key_id !== credentialsKeyId(tenantId)) throw InputError.at(['sealed'], 'the sealed secret is not this tenant’s', 'value_error');
    try {
      return (await this.keyring.open(s.key_id, { alg: s.alg, iv: s.iv, ct: s.ct, tag: s.tag }, aad(tenantId, p))).toString('utf8');
    } catch (e) {
      if (e instanceof DecryptionFailedError || e instanceof KeyMissingError) throw InputError.at(['sealed'], 'the sealed secret does not open for this tenant and purpose', 'value_error');
      throw e;
    }
  }
}
