/**
 * The PKCS#11 backend (pkcs11js): any HSM by module path, token label and user PIN; SoftHSM2 locally.
 * Keys are generated on the token (CKA_TOKEN) as sensitive, non-extractable AES-256 (encrypt/decrypt)
 * or generic-secret (HMAC-SHA-256) objects, found by CKA_LABEL. Encryption is CKM_AES_GCM with a
 * 96-bit IV from the HSM's RNG, a 128-bit tag and the caller's additional authenticated data.
 *
 * pkcs11js calls are synchronous: one logged-in R/W session serves the process, and because JavaScript
 * runs one call at a time an Init/Final pair is never interleaved.
 */
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { DependencyUnavailableError } from '@agw/shared';
import * as pkcs11js from 'pkcs11js';
import { DecryptionFailedError, type HsmBackend, type HsmInfo, type KeyKind, KeyMissingError, type SealedData } from './hsm-backend';

export interface Pkcs11Options {
  library: string;
  tokenLabel: string;
  pin: string;
}

const ALG = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;

type Handle = Buffer;

// PKCS#11 3.0 values pkcs11js does not name (measured with SoftHSM2 2.6.1: both mechanisms are listed and work)
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;
/** CKA_EC_PARAMS of Ed25519: the DER OBJECT IDENTIFIER 1.3.101.112 (RFC 8410). */
const ED25519_OID_DER = Buffer.from('06032b6570', 'hex');
/** DER SubjectPublicKeyInfo prefix of a raw 32-byte Ed25519 public key (RFC 8410) */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PAIRING_PROBE = Buffer.from('agw: which private key signs for this public key');

function pkcs11Code(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class Pkcs11Hsm implements HsmBackend {
  readonly name = 'pkcs11' as const;
  private readonly handles = new Map<string, Handle>();
  /** the Ed25519 pair chosen per label (ed25519Pair): the key published is the key that signs */
  private readonly ed25519 = new Map<string, { publicKey: Buffer; privateKey: Handle }>();

  private constructor(
    private readonly p11: pkcs11js.PKCS11,
    private readonly session: Handle,
    private readonly o: Pkcs11Options,
  ) {}

  /** Load the module, find the token by label, open a session and log in. */
  static open(o: Pkcs11Options): Pkcs11Hsm {
    const p11 = new pkcs11js.PKCS11();
    try {
      p11.load(o.library);
      try {
        p11.C_Initialize();
      } catch (e) {
        // another handle in this process initialised the module already: share it
        if (!/CKR_CRYPTOKI_ALREADY_INITIALIZED/.test(pkcs11Code(e))) throw e;
      }
    } catch (e) {
      throw new DependencyUnavailableError(`could not initialise the PKCS#11 module ${o.library}: ${pkcs11Code(e)}`);
    }
    try {
      const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === o.tokenLabel);
      if (!slot) throw new DependencyUnavailableError(`no HSM token labelled "${o.tokenLabel}" in ${o.library}`);
      const session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        p11.C_Login(session, pkcs11js.CKU_USER, o.pin);
      } catch (e) {
        if (!/CKR_USER_ALREADY_LOGGED_IN/.test(pkcs11Code(e))) {
          throw new DependencyUnavailableError(`login to HSM token "${o.tokenLabel}" failed: ${pkcs11Code(e)}`);
        }
      }
      return new Pkcs11Hsm(p11, session, o);
    } catch (e) {
      try {
        p11.C_Finalize();
      } catch {
        /* already failing */
      }
      throw e;
    }
  }

  info(): HsmInfo {
    return { backend: 'pkcs11', tokenLabel: this.o.tokenLabel, library: this.o.library, ready: true };
  }

  /** The secret keys under `label`. */
  private findAll(label: string): Handle[] {
    return this.findKeyObjects(label, pkcs11js.CKO_SECRET_KEY);
  }


  /** The key's handle; a cached handle is dropped when another process destroyed the object. */
  private key(label: string): Handle {
    const cached = this.handles.get(label);
    if (cached) return cached;
    const found = this.wrap(() => this.findAll(label));
    if (!found.length) throw new KeyMissingError(label);
    if (this.handles.size >= 50_000) this.handles.clear();
    this.handles.set(label, found[0]);
    return found[0];
  }

  private withKey<T>(label: string, fn: (h: Handle) => T): T {
    const h = this.key(label);
    try {
      return fn(h);
    } catch (e) {
      if (/CKR_(OBJECT|KEY)_HANDLE_INVALID/.test(pkcs11Code(e))) {
        this.handles.delete(label);
        return fn(this.key(label));
      }
      throw e;
    }
  }

  private wrap<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof KeyMissingError || e instanceof DecryptionFailedError) throw e;
      throw new DependencyUnavailableError(`HSM operation failed: ${pkcs11Code(e)}`, { cause: e });
    }
  }

  async ensureKey(label: string, kind: KeyKind): Promise<boolean> {
    return this.wrap(() => {
      if (this.findAll(label).length) return false;
      const common = [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_LABEL, value: label },
        { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
      ];
      const handle =
        kind === 'aes'
          ? this.p11.C_GenerateKey(this.session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
              ...common,
              { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
              { type: pkcs11js.CKA_ENCRYPT, value: true },
              { type: pkcs11js.CKA_DECRYPT, value: true },
            ])
          : this.p11.C_GenerateKey(this.session, { mechanism: pkcs11js.CKM_GENERIC_SECRET_KEY_GEN }, [
              ...common,
              { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_GENERIC_SECRET },
              { type: pkcs11js.CKA_SIGN, value: true },
              { type: pkcs11js.CKA_VERIFY, value: true },
            ]);
      this.handles.set(label, handle);
      return true;
    });
  }

  async keyExists(label: string): Promise<boolean> {
    return this.wrap(() => this.findAll(label).length > 0);
  }

  private gcm(iv: Buffer, aad: Buffer) {
    return {
      mechanism: pkcs11js.CKM_AES_GCM,
      parameter: { type: pkcs11js.CK_PARAMS_AES_GCM, iv, aad, ivBits: IV_BYTES * 8, tagBits: TAG_BYTES * 8 },
    };
  }

  async encrypt(label: string, plaintext: Buffer, aad: Buffer): Promise<SealedData> {
    return this.wrap(() =>
      this.withKey(label, (key) => {
        const iv = this.p11.C_GenerateRandom(this.session, Buffer.alloc(IV_BYTES));
        this.p11.C_EncryptInit(this.session, this.gcm(iv, aad), key);
        const out = this.p11.C_Encrypt(this.session, plaintext, Buffer.alloc(plaintext.length + TAG_BYTES));
        return {
          alg: ALG,
          iv: iv.toString('base64'),
          ct: out.subarray(0, out.length - TAG_BYTES).toString('base64'),
          tag: out.subarray(out.length - TAG_BYTES).toString('base64'),
        };
      }),
    );
  }

  async decrypt(label: string, sealed: SealedData, aad: Buffer): Promise<Buffer> {
    return this.wrap(() =>
      this.withKey(label, (key) => {
        const input = Buffer.concat([Buffer.from(sealed.ct, 'base64'), Buffer.from(sealed.tag, 'base64')]);
        this.p11.C_DecryptInit(this.session, this.gcm(Buffer.from(sealed.iv, 'base64'), aad), key);
        try {
          return Buffer.from(this.p11.C_Decrypt(this.session, input, Buffer.alloc(input.length)));
        } catch (e) {
          // a failed GCM tag check: SoftHSM2 reports CKR_GENERAL_ERROR, others CKR_ENCRYPTED_DATA_INVALID
          if (/CKR_(ENCRYPTED_DATA_INVALID|ENCRYPTED_DATA_LEN_RANGE|GENERAL_ERROR)/.test(pkcs11Code(e))) throw new DecryptionFailedError(label);
          throw e;
        }
      }),
    );
  }

  async hmac(label: string, data: Buffer): Promise<Buffer> {
    return this.wrap(() =>
      this.withKey(label, (key) => {
        this.p11.C_SignInit(this.session, { mechanism: pkcs11js.CKM_SHA256_HMAC }, key);
        return Buffer.from(this.p11.C_Sign(this.session, data, Buffer.alloc(32)));
      }),
    );
  }

  private findKeyObjects(label: string, cls: number): Handle[] {
    this.p11.C_FindObjectsInit(this.session, [
      { type: pkcs11js.CKA_CLASS, value: cls },
      { type: pkcs11js.CKA_LABEL, value: label },
    ]);
    try {
      return this.p11.C_FindObjects(this.session, 16);
    } finally {
      this.p11.C_FindObjectsFinal(this.session);
    }
  }

  private eddsaSign(privateKey: Handle, data: Buffer): Buffer {
    this.p11.C_SignInit(this.session, { mechanism: CKM_EDDSA }, privateKey);
    return Buffer.from(this.p11.C_Sign(this.session, data, Buffer.alloc(64)));
  }

  /**
   * The Ed25519 key pair under `label`: of the public keys there, the smallest (bytewise), with the private
   * key whose signature verifies under it. A token may hold several pairs under one label: two processes
   * that share a token but not a lock (two fleets on one SoftHSM token in CI, or replicas of different
   * deployments on one HSM partition) can each generate one at the same moment. Every process then picks
   * the same pair, and always signs with the private key of the public key it publishes (before, it
   * published the first public key found and signed with the first private key found: two different pairs).
   */
  private ed25519Pair(label: string): { publicKey: Buffer; privateKey: Handle } | undefined {
    const publics = this.findKeyObjects(label, pkcs11js.CKO_PUBLIC_KEY)
      .map((h) => this.ed25519PublicKey(h))
      .sort(Buffer.compare);
    const privates = this.findKeyObjects(label, pkcs11js.CKO_PRIVATE_KEY);
    if (!publics.length || !privates.length) return undefined;
    const signatures = privates.map((h) => ({ h, sig: this.eddsaSign(h, PAIRING_PROBE) }));
    for (const publicKey of publics) {
      const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
      const match = signatures.find((s) => verifySignature(null, PAIRING_PROBE, key, s.sig));
      if (match) return { publicKey, privateKey: match.h };
    }
    return undefined;
  }

  /** The raw 32-byte key from CKA_EC_POINT (SoftHSM2 returns it DER-wrapped as an OCTET STRING: 04 20 || key). */
  private ed25519PublicKey(pub: Handle): Buffer {
    const point = Buffer.from(this.p11.C_GetAttributeValue(this.session, pub, [{ type: pkcs11js.CKA_EC_POINT }])[0].value as Buffer);
    if (point.length === 34 && point[0] === 0x04 && point[1] === 0x20) return point.subarray(2);
    if (point.length === 32) return point;
    throw new Error(`unexpected CKA_EC_POINT of ${point.length} bytes for an Ed25519 key`);
  }

  async ensureEd25519Key(label: string): Promise<{ publicKey: Buffer; created: boolean }> {
    return this.wrap(() => {
      const existing = this.ed25519Pair(label);
      if (existing) {
        this.ed25519.set(label, existing);
        return { publicKey: existing.publicKey, created: false };
      }
      const common = [
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_LABEL, value: label },
        { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
      ];
      this.p11.C_GenerateKeyPair(
        this.session,
        { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
        [...common, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_EC_PARAMS, value: ED25519_OID_DER }],
        [
          ...common,
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_SIGN, value: true },
          { type: pkcs11js.CKA_SENSITIVE, value: true },
          { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        ],
      );
      // chosen as any other process would choose (another one may have generated a pair at the same moment)
      const chosen = this.ed25519Pair(label);
      if (!chosen) throw new KeyMissingError(label);
      this.ed25519.set(label, chosen);
      return { publicKey: chosen.publicKey, created: true };
    });
  }

  async signEd25519(label: string, data: Buffer): Promise<Buffer> {
    return this.wrap(() => {
      let pair = this.ed25519.get(label);
      if (!pair) {
        pair = this.ed25519Pair(label);
        if (!pair) throw new KeyMissingError(label);
        this.ed25519.set(label, pair);
      }
      return this.eddsaSign(pair.privateKey, data);
    });
  }

  async destroyKey(label: string): Promise<number> {
    return this.wrap(() => {
      this.handles.delete(label);
      this.ed25519.delete(label);
      // secret keys, and key pairs (the Ed25519 evidence key's two objects) under the label
      const all = [...this.findAll(label), ...this.findKeyObjects(label, pkcs11js.CKO_PUBLIC_KEY), ...this.findKeyObjects(label, pkcs11js.CKO_PRIVATE_KEY)];
      for (const h of all) this.p11.C_DestroyObject(this.session, h);
      return all.length;
    });
  }

  async close(): Promise<void> {
    try {
      this.p11.C_Logout(this.session);
    } catch {
      /* session already gone */
    }
    try {
      this.p11.C_CloseSession(this.session);
      this.p11.C_Finalize();
    } catch {
      /* already finalized */
    }
  }
}
