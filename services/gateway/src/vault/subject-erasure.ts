/**
 * Crypto-shredding as the API offers it: the vault destroys the subject's HSM key and returns the
 * actions whose stored params carried the subject's envelopes; records_affected counts the audit
 * records of those actions that really hold one of the subject's envelopes (an action has several
 * records when it went through the approval queue). The erasure is then recorded on the chain as a
 * control_plane record and returned as a signed statement (audit service RecordErasure).
 */
import { jsonOf } from '@agw/shared';
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
  const r = await vault.eraseSubject({ tenant_id: tenantId, subject_id: subjectId });
  const marker = JSON.stringify(subjectId);
  let records = 0;
  const ids = [...r.action_ids];
  while (ids.length) {
    const batch = ids.splice(0, 16);
    const found = await Promise.all(batch.map((actionId) => audit.getByAction({ tenant_id: tenantId, action_id: actionId })));
    for (const f of found) {
      records += f.records.filter((rec) => (jsonOf(rec.entry, 'params')?.text ?? '').includes(`"subject":${marker}`)).length;
    }
  }
  // the erasure as evidence: a control_plane record (ids and counts only) and its signed statement
  const status = await vault.getSubjectStatus({ tenant_id: tenantId, subject_id: subjectId });
  const s = await audit.recordErasure({ tenant_id: tenantId, subject_id: r.subject_id, key_handle: status.key_id, erased_at: r.erased_at, records_affected: records });
  const rec = s.record!;
  return {
    status: 'erased',
    subject_id: r.subject_id,
    records_affected: records,
    already_erased: r.already_erased,
    erased_at: r.erased_at,
    erasure_record: { id: rec.id, action_id: rec.entry?.action_id ?? '', leaf_index: rec.tenant_seq, record_hash: rec.record_hash, prev_hash: rec.prev_hash },
    signed_statement: s.note,
    key_handle: status.key_id,
    verifier_key: s.vkey,
  };
}
