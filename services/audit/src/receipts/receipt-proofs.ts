/**
 * From a record to its proof: the RFC 9162 inclusion proof of the record's leaf up to the FIRST signed
 * checkpoint that contains it, with that checkpoint (docs/evidence.md, "Receipts"). While no signed
 * checkpoint contains the leaf the answer is `pending`, with the time by which it must be merged (the
 * record's time plus the maximum merge delay).
 */
import { NotFoundError, recordIdOf } from '@agw/shared';
import type { AuditChain } from '../chain/audit-chain';
import type { StoredRecord } from '../chain/audit-record.repository';
import type { Checkpoints } from '../checkpoints/checkpoints';
import { type CosignatureRepository, cosignedNote } from '../checkpoints/witnessing';
import type { MerkleProofs } from '../merkle/merkle-proofs';
import type { MerkleRepository } from '../merkle/merkle.repository';
import { recordLeafHash } from './receipts';

export interface ReceiptProof {
  status: 'merged' | 'pending';
  record_id: number;
  leaf_index: number;
  leaf_hash: string;
  record_hash: string;
  tree_size: number;
  proof: string[];
  checkpoint: string;
  merge_by: string;
  max_merge_delay_seconds: number;
}

export class ReceiptProofs {
  constructor(private readonly d: { chain: AuditChain; checkpoints: Checkpoints; proofs: MerkleProofs; heads: MerkleRepository; mmdSeconds: number; cosignatures?: CosignatureRepository }) {}

  async record(tenantId: string, recordId: number): Promise<StoredRecord> {
    const r = await this.d.chain.byRecordId(tenantId, recordId);
    if (!r) throw new NotFoundError(`No audit record ${recordId}`);
    return r;
  }

  async proof(tenantId: string, recordId: number): Promise<ReceiptProof> {
    const record = await this.record(tenantId, recordId);
    const base = {
      record_id: recordIdOf(record.tenant_seq),
      leaf_index: record.tenant_seq,
      leaf_hash: recordLeafHash(record.record_hash).toString('hex'),
      record_hash: record.record_hash,
      merge_by: new Date(Date.parse(record.requested_at) + this.d.mmdSeconds * 1000).toISOString(),
      max_merge_delay_seconds: this.d.mmdSeconds,
    };
    // signs pending tree heads first (fork-checked), so a built head counts at once
    const first = (await this.d.checkpoints.list(tenantId)).find((c) => c.tree_size > record.tenant_seq);
    if (!first) return { status: 'pending', ...base, tree_size: 0, proof: [], checkpoint: '' };
    const head = (await this.d.heads.headsByIndex(tenantId, [first.tree_index])).get(first.tree_index);
    if (!head || head.tree_size !== first.tree_size || head.merkle_root !== first.merkle_root) throw new Error(`tree head ${first.tree_index} does not match its signed checkpoint`);
    const p = await this.d.proofs.inclusionAt(tenantId, record, head);
    if (!p.verified) throw new Error(`the inclusion proof of record ${recordId} does not verify against its checkpoint`);
    // the checkpoint with its witnesses' cosignature lines (docs/evidence.md, "Witnesses"): a signed-note reader ignores the lines it has no key for
    const cosigs = (await this.d.cosignatures?.ofSizes(tenantId, [first.tree_size]))?.get(first.tree_size) ?? [];
    return { status: 'merged', ...base, tree_size: first.tree_size, proof: p.proof, checkpoint: cosignedNote(first.note, cosigs) };
  }
}
