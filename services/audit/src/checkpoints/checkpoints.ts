/**
 * Signed checkpoints of each tenant's tree heads. Every tree head gets one, in order: before signing
 * head k the signer takes the previous signed checkpoint (its root as the signed note states it) and
 * checks the RFC 9162 consistency proof from stored nodes between the two sizes; a fork (the proof does
 * not verify, or the log shrank) is refused and logged, never signed (C2SP tlog-checkpoint: a log MUST
 * NOT sign a checkpoint inconsistent with one it signed before). The signature comes from the vault,
 * whose HSM holds the Ed25519 key; signing runs after the tree head's commit, and a head left unsigned
 * (vault down) is signed on the next build or the next read of the tenant's checkpoints.
 */
import { ConflictError, type Database, type Logger, NotFoundError, sha256Hex } from '@agw/shared';
import type { Transaction } from 'kysely';
import type { MerkleProofs } from '../merkle/merkle-proofs';
import type { MerkleRepository, TreeHead } from '../merkle/merkle.repository';
import type { CheckpointRepository, StoredCheckpoint } from './checkpoint.repository';
import { checkpointText, parseCheckpointBody } from './checkpoint-text';

/** The vault's note signer as the audit service uses it. */
export interface NoteSignerPort {
  keyName(tenantId: string): Promise<string>;
  sign(tenantId: string, text: string): Promise<{ note: string; keyName: string }>;
}

export class ForkRefusedError extends ConflictError {}

export class Checkpoints {
  constructor(
    private readonly d: { repo: CheckpointRepository; heads: MerkleRepository; proofs: MerkleProofs; signer: NoteSignerPort; logger: Logger },
  ) {}

  /** Sign every tree head of the tenant newer than its latest checkpoint, oldest first. */
  async signPending(tenantId: string): Promise<StoredCheckpoint[]> {
    const last = await this.d.repo.latest(tenantId);
    const heads = (await this.d.heads.listHeads(tenantId)).filter((h) => h.tree_size > (last?.tree_size ?? 0));
    if (heads.length === 0) return [];
    const origin = await this.d.signer.keyName(tenantId);
    const signed: StoredCheckpoint[] = [];
    for (const head of heads) {
      const c = await this.d.repo.db.transaction().execute(async (trx) => {
        await this.d.repo.lockTenant(tenantId, trx);
        const prev = await this.d.repo.latest(tenantId, trx);
        if (prev && prev.tree_size >= head.tree_size) return undefined; // another replica signed it meanwhile
        await this.checkConsistent(tenantId, prev, head, trx);
        const { note, keyName } = await this.d.signer.sign(tenantId, checkpointText(origin, head.tree_size, head.merkle_root));
        const row = {
          tree_size: head.tree_size,
          tree_index: head.tree_index,
          merkle_root: head.merkle_root,
          origin,
          key_name: keyName,
          note,
          checkpoint_sha256: sha256Hex(note),
        };
        await this.d.repo.insert(tenantId, row, trx);
        return { tenant_id: tenantId, ...row, signed_at: new Date().toISOString() };
      });
      if (c) signed.push(c);
    }
    return signed;
  }

  /**
   * The fork check: the previous signed checkpoint is a prefix of the new head (RFC 9162 consistency from
   * stored nodes), read through the signing transaction's connection. A read from the pool here deadlocked
   * an audit replica: ten concurrent signers each held a pooled connection (the tenant lock, or waiting for
   * it) while the lock's holder waited for an eleventh.
   */
  private async checkConsistent(tenantId: string, prev: StoredCheckpoint | undefined, head: TreeHead, trx: Transaction<Database>): Promise<void> {
    if (!prev) return;
    const signedBefore = parseCheckpointBody(prev.note);
    const ok =
      signedBefore.treeSize === prev.tree_size &&
      (await this.d.proofs.consistentBySize(tenantId, signedBefore.treeSize, signedBefore.rootHex, head.tree_size, head.merkle_root, trx));
    if (!ok) {
      this.d.logger.error({ tenantId, signed_size: prev.tree_size, head_size: head.tree_size, tree_index: head.tree_index }, 'refusing to sign a checkpoint inconsistent with the previous signed one (fork)');
      throw new ForkRefusedError(`tree head ${head.tree_index} (size ${head.tree_size}) is not consistent with the checkpoint signed at size ${prev.tree_size}: not signed`);
    }
  }

  /** The latest checkpoint, signing what is pending first (a vault outage leaves the last signed one). */
  async latest(tenantId: string): Promise<StoredCheckpoint> {
    await this.signPendingQuietly(tenantId);
    const c = await this.d.repo.latest(tenantId);
    if (!c) throw new NotFoundError('The tenant has no signed checkpoint yet: no Merkle tree head was built');
    return c;
  }

  async atSize(tenantId: string, treeSize: number): Promise<StoredCheckpoint> {
    await this.signPendingQuietly(tenantId);
    const c = await this.d.repo.atSize(tenantId, treeSize);
    if (!c) throw new NotFoundError(`No signed checkpoint of tree size ${treeSize}`);
    return c;
  }

  async list(tenantId: string): Promise<StoredCheckpoint[]> {
    await this.signPendingQuietly(tenantId);
    return this.d.repo.list(tenantId);
  }

  private async signPendingQuietly(tenantId: string): Promise<void> {
    try {
      await this.signPending(tenantId);
    } catch (e) {
      if (e instanceof ForkRefusedError) throw e;
      this.d.logger.warn({ err: e, tenantId }, 'pending checkpoints not signed now; the signed ones are served');
    }
  }
}
