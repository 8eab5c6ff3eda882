/**
 * Names, creates and uses the tenant's HSM keys. Every key is generated inside the backend and
 * registered (label only) in vault_keys:
 *   agw:<tenant>:credentials       AES-256-GCM, seals the tenant's tool credentials
 *   agw:<tenant>:subject-hmac      HMAC-SHA-256, derives subject ids from identifiers (keyed hash)
 *   agw:<tenant>:subject:<subject> AES-256-GCM, one per data subject; destroyed on erasure
 */
import type { HsmBackend, KeyKind, SealedData } from '../hsm/hsm-backend';
import type { KeyRepository } from './key.repository';

export type KeyPurpose = 'credentials' | 'subject_hmac' | 'pii_subject';

export const credentialsKeyId = (tenantId: string) => `agw:${tenantId}:credentials`;
export const subjectHmacKeyId = (tenantId: string) => `agw:${tenantId}:subject-hmac`;
export const subjectKeyId = (tenantId: string, subjectId: string) => `agw:${tenantId}:subject:${subjectId}`;

/** The label names a key destroyed by crypto-shredding. */
export class KeyDestroyedError extends Error {
  constructor(readonly keyId: string) {
    super(`key ${keyId} was destroyed`);
    this.name = 'KeyDestroyedError';
  }
}

export class Keyring {
  /** labels known to exist in this process (a destroyed label is removed) */
  private readonly ensured = new Set<string>();

  constructor(
    readonly hsm: HsmBackend,
    private readonly keys: KeyRepository,
  ) {}

  /** Create the key in the HSM when missing and register it; idempotent and safe across replicas. */
  async ensure(tenantId: string, keyId: string, purpose: KeyPurpose, subjectId: string | null = null): Promise<boolean> {
    if (this.ensured.has(keyId)) return false;
    const kind: KeyKind = purpose === 'subject_hmac' ? 'hmac' : 'aes';
    const created = await this.keys.withLabelLock(tenantId, keyId, async (keys) => {
      // a destroyed key is never generated again under its label (erasure is irreversible)
      if ((await keys.get(tenantId, keyId))?.destroyed_at) throw new KeyDestroyedError(keyId);
      const made = await this.hsm.ensureKey(keyId, kind);
      await keys.register(tenantId, { key_id: keyId, purpose, subject_id: subjectId, backend: this.hsm.name });
      return made;
    });
    // bounded memo (one entry per subject): forgetting only costs one idempotent ensure later
    if (this.ensured.size >= 50_000) this.ensured.clear();
    this.ensured.add(keyId);
    return created;
  }

  async seal(keyId: string, plaintext: Buffer, aad: string): Promise<SealedData> {
    return this.hsm.encrypt(keyId, plaintext, Buffer.from(aad, 'utf8'));
  }

  async open(keyId: string, sealed: SealedData, aad: string): Promise<Buffer> {
    return this.hsm.decrypt(keyId, sealed, Buffer.from(aad, 'utf8'));
  }

  async hmac(tenantId: string, data: string): Promise<Buffer> {
    const keyId = subjectHmacKeyId(tenantId);
    await this.ensure(tenantId, keyId, 'subject_hmac');
    return this.hsm.hmac(keyId, Buffer.from(data, 'utf8'));
  }

  exists(keyId: string): Promise<boolean> {
    return this.hsm.keyExists(keyId);
  }

  /** Destroy the key in the HSM (every object under the label) and record it. */
  async destroy(tenantId: string, keyId: string): Promise<number> {
    this.ensured.delete(keyId);
    return this.keys.withLabelLock(tenantId, keyId, async (keys) => {
      await keys.markDestroyed(tenantId, keyId);
      return this.hsm.destroyKey(keyId);
    });
  }

  list(tenantId: string) {
    return this.keys.list(tenantId);
  }

  get(tenantId: string, keyId: string) {
    return this.keys.get(tenantId, keyId);
  }
}
