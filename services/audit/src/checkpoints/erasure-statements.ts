/**
 * Erasure statements: a subject's crypto-shredding recorded on the tenant's chain and signed.
 *
 * The record (source `control_plane`, tool `agw.subjects`, method `erase`) carries only ids and counts:
 * the subject id (a pseudonym), the HSM label of the destroyed key, erased_at and records_affected; its
 * action id is derived from tenant and subject (UUID form of SHA-256), so a repeated erasure finds the
 * first record instead of appending another. The statement text names the record (action id, record
 * hash, leaf index), so an auditor can prove from the export that the erasure happened, when, and that
 * the chain stayed valid across it; it is signed by the vault's key under the tenant's key name:
 *
 *   agw-erasure-statement/v1
 *   origin <the tenant's log origin>
 *   subject_id <id>
 *   key_handle <HSM label>
 *   erased_at <ISO 8601>
 *   records_affected <n>
 *   action_id <uuid>
 *   record_hash <hex>
 *   leaf_index <n>
 */
import { InputError, controlPlaneRecord, sha256Hex } from '@agw/shared';
import type { AuditChain } from '../chain/audit-chain';
import type { StoredRecord } from '../chain/audit-record.repository';
import type { NoteSignerPort } from './checkpoints';

export const ERASURE_STATEMENT_HEADER = 'agw-erasure-statement/v1';
const TOKEN = /^\S{1,200}$/;

export function erasureActionId(tenantId: string, subjectId: string): string {
  const h = sha256Hex(`agw-subject-erasure\n${tenantId}\n${subjectId}`);
  // RFC 4122 layout, version 5-like (name-based) and variant bits set
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function erasureStatementText(origin: string, r: StoredRecord): string {
  const p = r.params as { subject_id: string; key_handle: string; erased_at: string; records_affected: number };
  return [
    ERASURE_STATEMENT_HEADER,
    `origin ${origin}`,
    `subject_id ${p.subject_id}`,
    `key_handle ${p.key_handle}`,
    `erased_at ${p.erased_at}`,
    `records_affected ${p.records_affected}`,
    `action_id ${r.action_id}`,
    `record_hash ${r.record_hash}`,
    `leaf_index ${r.tenant_seq}`,
    '',
  ].join('\n');
}

export class ErasureStatements {
  constructor(
    private readonly chain: AuditChain,
    private readonly signer: NoteSignerPort & { verifierKey(tenantId: string): Promise<{ vkey: string; key_name: string }> },
  ) {}

  async record(tenantId: string, e: { subjectId: string; keyHandle: string; erasedAt: string; recordsAffected: number }): Promise<{ record: StoredRecord; note: string; keyName: string; vkey: string }> {
    for (const [field, v] of [['subject_id', e.subjectId], ['key_handle', e.keyHandle], ['erased_at', e.erasedAt]] as const) {
      if (!TOKEN.test(v)) throw InputError.field(field, `${field} is required and has no spaces`);
    }
    const actionId = erasureActionId(tenantId, e.subjectId);
    const existing = (await this.chain.byAction(tenantId, actionId))[0];
    const record =
      existing ??
      (await this.chain.append(
        tenantId,
        controlPlaneRecord(
          { action_id: actionId, agent_id: 'control-plane', agent_type: 'control_plane', agent_version: '1', tool: 'agw.subjects', method: 'erase', session_id: null },
          {
            params: { subject_id: e.subjectId, key_handle: e.keyHandle, erased_at: e.erasedAt, records_affected: e.recordsAffected },
            decision: 'allow',
            violations: [],
            severity: 'none',
            bundle_revision: 'subject-erasure',
            details: { operation: 'subject_erasure', statement: ERASURE_STATEMENT_HEADER },
          },
        ),
      ));
    const key = await this.signer.verifierKey(tenantId);
    const signed = await this.signer.sign(tenantId, erasureStatementText(key.key_name, record));
    return { record, note: signed.note, keyName: signed.keyName, vkey: key.vkey };
  }
}
