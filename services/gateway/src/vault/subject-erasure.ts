/**
 * Crypto-shredding as the API offers it: the vault destroys the subject's HSM key and returns the
 * actions whose stored params carried the subject's envelopes; records_affected counts the audit
 * records of those actions that really hold one of the subject's envelopes (an action has several
 * records when it went through the approval queue). The erasure is then recorded on the chain as a
 * control_plane record and returned as a signed statement (audit service RecordErasure).
 */
import type { AuditClient, VaultClient } from '../clients/grpc-clients';

export interface ErasureResult {
  status: 'erased';
  subject_id: string;
  records_affected: number;
  already_erased: boolean;
  erased_at: string;
  /** The control_plane record of the erasure (the first one when the subject was erased before). */
  erasure_record: { id: number; action_id: string; leaf_index: number; record_hash: string; prev_hash: string };
  /** The erasure statement as a C2SP signed note (Ed25519, the tenant's key name; docs/evidence.md). */
  signed_statement: string;
  key_handle: string;
  verifier_key: string;
}

export async function eraseSubject(vault: VaultClient, audit: AuditClient, tenantId: string, subjectId: string): Promise<ErasureResult> {
  const r = await vault.eraseSubject({ tenantId, subjectId });
  const marker = JSON.stringify(subjectId);
  let records = 0;
  const ids = [...r.actionIds];
  while (ids.length) {
    const batch = ids.splice(0, 16);
    const found = await Promise.all(batch.map((actionId) => audit.getByAction({ tenantId, actionId })));
    for (const f of found) {
      records += f.records.filter((rec) => (rec.entry?.paramsJson ?? '').includes(`"subject":${marker}`)).length;
    }
  }
  // the erasure as evidence: a control_plane record (ids and counts only) and its signed statement
  const status = await vault.getSubjectStatus({ tenantId, subjectId });
  const s = await audit.recordErasure({ tenantId, subjectId: r.subjectId, keyHandle: status.keyId, erasedAt: r.erasedAt, recordsAffected: records });
  const rec = s.record!;
  return {
    status: 'erased',
    subject_id: r.subjectId,
    records_affected: records,
    already_erased: r.alreadyErased,
    erased_at: r.erasedAt,
    erasure_record: { id: rec.id, action_id: rec.entry?.actionId ?? '', leaf_index: rec.tenantSeq, record_hash: rec.recordHash, prev_hash: rec.prevHash },
    signed_statement: s.note,
    key_handle: status.keyId,
    verifier_key: s.vkey,
  };
}
