/** The note signer port over gRPC: the vault's NoteSigningService (the Ed25519 key never leaves the vault). */
import type { vault } from '@agw/proto';
import type { PeerClient } from '@agw/shared';
import type { NoteSignerPort } from './checkpoints';

export type NoteSigningClient = PeerClient<'noteSigning'>;

export class VaultNoteSigner implements NoteSignerPort {
  private readonly names = new Map<string, string>();

  constructor(private readonly client: NoteSigningClient) {}

  async keyName(tenantId: string): Promise<string> {
    const known = this.names.get(tenantId);
    if (known) return known;
    const k = await this.client.getNoteKey({ tenant_id: tenantId });
    if (this.names.size > 10_000) this.names.clear();
    this.names.set(tenantId, k.key_name);
    return k.key_name;
  }

  async sign(tenantId: string, text: string): Promise<{ note: string; keyName: string }> {
    const r = await this.client.signNote({ tenant_id: tenantId, text });
    return { note: r.note, keyName: r.key_name };
  }

  /** The tenant's verifier key as the vault publishes it (key name, vkey, key id, public key, custody). */
  async verifierKey(tenantId: string): Promise<vault.NoteKey> {
    return this.client.getNoteKey({ tenant_id: tenantId });
  }
}
