/**
 * The HashiCorp Vault Transit backend (node-vault), behind the same interface as the PKCS#11 one.
 * Keys are `aes256-gcm96` (encryption) or `hmac` Transit keys created non-exportable; the AAD travels
 * as Transit's `associated_data`. Transit returns `vault:vN:<base64(nonce|ct|tag)>`, kept whole in
 * `ct`. Destroying a key first sets `deletion_allowed`, then deletes it (Transit's crypto-shredding).
 * The evidence signing key is a non-exportable Transit `ed25519` key: its public key is read from the key
 * (`keys.<version>.public_key`) and notes are signed with `sign/<key>` (pure Ed25519, RFC 8032).
 * Kept thin on purpose: no Vault server runs on the developer machines; its contract test runs when
 * VAULT_ADDR is set (test/vault-transit.contract.test.ts).
 */
import { DependencyUnavailableError } from '@agw/shared';
import NodeVault from 'node-vault';
import { DecryptionFailedError, type HsmBackend, type HsmInfo, type KeyKind, KeyMissingError, type SealedData } from './hsm-backend';

export interface TransitOptions {
  endpoint: string;
  token: string;
  mount: string;
}

/** Transit key names allow [A-Za-z0-9_-.]; our labels use ':' as separator. */
const keyName = (label: string) => label.replace(/[^A-Za-z0-9_.-]/g, '_');

function statusOf(e: unknown): number | undefined {
  return (e as { response?: { statusCode?: number } }).response?.statusCode;
}

export class VaultTransitHsm implements HsmBackend {
  readonly name = 'transit' as const;
  private readonly vault: NodeVault.client;

  constructor(private readonly o: TransitOptions) {
    this.vault = NodeVault({ endpoint: o.endpoint, token: o.token, apiVersion: 'v1' });
  }

  private path(...parts: string[]): string {
    return [this.o.mount, ...parts].join('/');
  }

  private async call<T>(label: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const status = statusOf(e);
      if (status === 404) throw new KeyMissingError(label);
      if (status === 400 && /decrypt|authentication|message authentication failed/i.test(String((e as Error).message))) throw new DecryptionFailedError(label);
      throw new DependencyUnavailableError(`Vault Transit request failed${status ? ` (HTTP ${status})` : ''}`, { cause: e });
    }
  }

  info(): HsmInfo {
    return { backend: 'transit', tokenLabel: this.o.mount, library: this.o.endpoint, ready: true };
  }

  async keyExists(label: string): Promise<boolean> {
    try {
      await this.call(label, () => this.vault.read(this.path('keys', keyName(label))));
      return true;
    } catch (e) {
      if (e instanceof KeyMissingError) return false;
      throw e;
    }
  }

  async ensureKey(label: string, kind: KeyKind): Promise<boolean> {
    if (await this.keyExists(label)) return false;
    await this.call(label, () =>
      this.vault.write(this.path('keys', keyName(label)), { type: kind === 'aes' ? 'aes256-gcm96' : 'hmac', key_size: kind === 'hmac' ? 32 : undefined, exportable: false }),
    );
    return true;
  }

  async encrypt(label: string, plaintext: Buffer, aad: Buffer): Promise<SealedData> {
    const r = await this.call(label, () =>
      this.vault.write(this.path('encrypt', keyName(label)), { plaintext: plaintext.toString('base64'), associated_data: aad.toString('base64') }),
    );
    return { alg: 'transit:aes256-gcm96', iv: '', ct: String(r.data.ciphertext), tag: '' };
  }

  async decrypt(label: string, sealed: SealedData, aad: Buffer): Promise<Buffer> {
    const r = await this.call(label, () => this.vault.write(this.path('decrypt', keyName(label)), { ciphertext: sealed.ct, associated_data: aad.toString('base64') }));
    return Buffer.from(String(r.data.plaintext), 'base64');
  }

  async hmac(label: string, data: Buffer): Promise<Buffer> {
    const r = await this.call(label, () => this.vault.write(this.path('hmac', keyName(label), 'sha2-256'), { input: data.toString('base64') }));
    // vault:v1:<base64>
    return Buffer.from(String(r.data.hmac).split(':').pop() ?? '', 'base64');
  }

  async ensureEd25519Key(label: string): Promise<{ publicKey: Buffer; created: boolean }> {
    let created = false;
    if (!(await this.keyExists(label))) {
      await this.call(label, () => this.vault.write(this.path('keys', keyName(label)), { type: 'ed25519', exportable: false }));
      created = true;
    }
    const r = await this.call(label, () => this.vault.read(this.path('keys', keyName(label))));
    const d = r.data as { type?: string; latest_version?: number; keys?: Record<string, { public_key?: string }> };
    if (d.type !== 'ed25519') throw new DependencyUnavailableError(`Vault Transit key ${keyName(label)} is of type ${d.type}, not ed25519`);
    const publicKey = Buffer.from(d.keys?.[String(d.latest_version ?? 1)]?.public_key ?? '', 'base64');
    if (publicKey.length !== 32) throw new DependencyUnavailableError(`Vault Transit key ${keyName(label)} has no 32-byte Ed25519 public key`);
    return { publicKey, created };
  }

  async signEd25519(label: string, data: Buffer): Promise<Buffer> {
    const r = await this.call(label, () => this.vault.write(this.path('sign', keyName(label)), { input: data.toString('base64') }));
    // vault:v1:<base64 signature>
    const sig = Buffer.from(String(r.data.signature).split(':').pop() ?? '', 'base64');
    if (sig.length !== 64) throw new DependencyUnavailableError('Vault Transit returned no 64-byte Ed25519 signature');
    return sig;
  }

  async destroyKey(label: string): Promise<number> {
    if (!(await this.keyExists(label))) return 0;
    await this.call(label, () => this.vault.write(this.path('keys', keyName(label), 'config'), { deletion_allowed: true }));
    await this.call(label, () => this.vault.delete(this.path('keys', keyName(label))));
    return 1;
  }

  async close(): Promise<void> {
    /* stateless HTTP client */
  }
}
