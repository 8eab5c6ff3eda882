/**
 * The one interface the vault uses for key material. Keys are created inside the backend (a PKCS#11 HSM
 * or HashiCorp Vault Transit), are never extractable, and are addressed by label. AES-256-GCM with
 * additional authenticated data binds every ciphertext to its tenant (and subject or credential).
 */

/** AES-256-GCM output, base64 fields. Transit packs nonce+ct+tag into `ct` (`vault:v1:...`) and leaves iv/tag empty. */
export interface SealedData {
  alg: string;
  iv: string;
  ct: string;
  tag: string;
}

export type KeyKind = 'aes' | 'hmac';

export interface HsmInfo {
  backend: 'pkcs11' | 'transit';
  tokenLabel: string;
  library: string;
  ready: boolean;
}

export interface HsmBackend {
  readonly name: 'pkcs11' | 'transit';
  /** Create the key when missing (idempotent). Returns true when it was created now. */
  ensureKey(label: string, kind: KeyKind): Promise<boolean>;
  keyExists(label: string): Promise<boolean>;
  encrypt(label: string, plaintext: Buffer, aad: Buffer): Promise<SealedData>;
  /** Throws KeyMissingError when the key does not exist (e.g. destroyed by erasure). */
  decrypt(label: string, sealed: SealedData, aad: Buffer): Promise<Buffer>;
  /** HMAC-SHA-256 with a key that never leaves the backend. */
  hmac(label: string, data: Buffer): Promise<Buffer>;
  /** Destroy every object with this label; returns how many were destroyed. */
  destroyKey(label: string): Promise<number>;
  info(): HsmInfo;
  close(): Promise<void>;
  /**
   * Ed25519 signing key pair generated inside the backend (private half sensitive, non-extractable);
   * created when missing (idempotent). Returns the 32-byte public key. Optional: a backend without
   * EdDSA leaves it out and the vault says so (docs/evidence.md).
   */
  ensureEd25519Key?(label: string): Promise<{ publicKey: Buffer; created: boolean }>;
  /** A pure Ed25519 signature (RFC 8032, 64 bytes) over `data` with the key pair `label`. */
  signEd25519?(label: string, data: Buffer): Promise<Buffer>;
}

/** The key a label names does not exist (never created, or destroyed by crypto-shredding). */
export class KeyMissingError extends Error {
  constructor(readonly label: string) {
    super(`key ${label} does not exist`);
    this.name = 'KeyMissingError';
  }
}

/** The ciphertext does not authenticate under the key and AAD (tampered, or bound to another tenant/subject). */
export class DecryptionFailedError extends Error {
  constructor(readonly label: string) {
    super(`ciphertext does not authenticate under key ${label}`);
    this.name = 'DecryptionFailedError';
  }
}
