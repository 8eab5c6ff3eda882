/**
 * Crypto-shredding as the API offers it: the vault destroys the subject's HSM key and returns the
 * actions whose stored params carried the subject's envelopes; records_affected counts the audit
 * records of those actions that really hold one of the subject's envelopes (an action has several
 * records when it went through the approval queue).
 */
import type { AuditClient, VaultClient } from '../clients/grpc-clients';

export interface ErasureResult {
  status: 'erased';
  subject_id: string;
  records_affected: number;
  already_erased: boolean;
  erased_at: string;
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
  return { status: 'erased', subject_id: r.subjectId, records_affected: records, already_erased: r.alreadyErased, erased_at: r.erasedAt };
}
