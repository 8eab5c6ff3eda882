/** gRPC adapter of the audit chain: translate messages, call the domain, nothing else. */
import { audit as pb } from '@agw/proto';
import { DependencyUnavailableError, type GrpcServiceBinding, InputError, type Logger, bindService, decisionInputMessage, decisionInputRow, fromJson, jsonOf, recordIdOf, requiredField, toAuditEntry } from '@agw/shared';
import type { DecisionCountsReads, SessionTotalsReads, StoredRecord } from '../chain/audit-record.repository';
import type { AuditChain } from '../chain/audit-chain';
import { toEntry } from '../chain/entry-message';
import { type DecisionInputRepository, MAX_DECISION_INPUTS } from '../chain/decision-input.repository';
import type { ErasureStatements } from '../checkpoints/erasure-statements';
import type { ReceiptProofs } from '../receipts/receipt-proofs';
import type { Receipts } from '../receipts/receipts';

/** Receipts (docs/evidence.md, "Receipts"): `onAppend` false (AUDIT_RECEIPTS=false) signs none on append; the reads still work. */
export interface ReceiptService {
  receipts: Receipts;
  proofs: ReceiptProofs;
  onAppend: boolean;
}

/**
 * A record as the RPCs answer it. `id` is the tenant's record id (`recordIdOf(tenant_seq)`, 1 for its first
 * record): the global row key never leaves this service, so no caller can show it (docs/audit.md, "Record ids").
 */
export function toMessage(r: StoredRecord): pb.AuditRecord {
  return { id: recordIdOf(r.tenant_seq), tenant_seq: r.tenant_seq, prev_hash: r.prev_hash, record_hash: r.record_hash, entry: toAuditEntry(r), event_queued: false, commit_ms: 0, receipt: undefined };
}

export function auditGrpcService(
  chain: AuditChain,
  sessionTotals: SessionTotalsReads,
  logger: Logger,
  erasures?: ErasureStatements,
  decisionCounts?: DecisionCountsReads,
  decisionInputs?: DecisionInputRepository,
  receipts?: ReceiptService,
): GrpcServiceBinding {
  const needReceipts = () => {
    if (!receipts) throw new Error('receipts are not configured in this audit service');
    return receipts;
  };
  const append = async (req: pb.AppendRequest): Promise<pb.AuditRecord> => {
    const arrived = performance.now();
    const entry = toEntry(req.entry);
    // the replay input: the call as the record holds it, with what the record lacks (the decision's facts)
    const replay = req.decision_facts ? decisionInputRow(entry, req.decision_facts) : undefined;
    const r = await chain.append(req.tenant_id, entry, { eventKind: req.event_kind || undefined, webhook: req.tenant_has_webhook ?? true, replay, appendKey: req.append_key || undefined });
    const commitMs = performance.now() - arrived;
    // signed right after the commit, before the caller is answered: no store round trip, no HSM call (receipts.ts)
    const receipt = receipts?.onAppend ? await receipts.receipts.issue(req.tenant_id, r) : undefined;
    if (req.omit_entry) return { id: recordIdOf(r.tenant_seq), tenant_seq: r.tenant_seq, prev_hash: r.prev_hash, record_hash: r.record_hash, entry: undefined, event_queued: r.event_queued, commit_ms: commitMs, receipt };
    return { ...toMessage(r), event_queued: r.event_queued, commit_ms: commitMs, receipt };
  };
  return bindService(
    pb.AuditServiceService,
    {
      append,
      appendStream: append,
      listRecords: async (req) => ({
        records: (
          await chain.list(req.tenant_id, { limit: Math.min(Math.max(req.limit || 200, 1), 10_000), sessionId: req.session_id || undefined, chronological: req.chronological, memberId: req.member_id || undefined })
        ).map(toMessage),
      }),
      getByAction: async (req) => ({ records: (await chain.byAction(req.tenant_id, req.action_id)).map(toMessage) }),
      verify: async (req) => {
        const v = await chain.verify(req.tenant_id);
        return {
          valid: v.valid,
          record_count: v.record_count,
          failed_at_action_id: v.failed_at_action_id ?? '',
          failed_at_record_id: v.failed_at_record_id ?? 0,
          reason: v.reason ?? '',
        };
      },
      tamperSimulate: async (req) => {
        const r = await chain.tamperSimulate(req.tenant_id, {
          actionId: req.action_id || undefined,
          field: req.field || undefined,
          value: fromJson(jsonOf(req, 'value'), 'value'),
        });
        return { status: 'tampered', records: 1, action_id: r.action_id };
      },
      tamperRestore: async (req) => ({ status: 'restored', records: await chain.tamperRestore(req.tenant_id), action_id: '' }),
      recordErasure: async (req) => {
        if (!erasures) throw new Error('erasure statements are not configured in this audit service');
        const r = await erasures.record(req.tenant_id, { subjectId: req.subject_id, keyHandle: req.key_handle, erasedAt: req.erased_at, recordsAffected: Number(req.records_affected) });
        return { record: toMessage(r.record), note: r.note, key_name: r.keyName, vkey: r.vkey };
      },
      sessionTotals: async (req) => ({ totals: await sessionTotals.totals(req.tenant_id, req.session_ids) }),
      decisionCounts: async (req) => {
        if (!decisionCounts) throw new Error('decision counts are not configured in this audit service');
        return { counts: await decisionCounts.counts(req.tenant_id, req.days) };
      },
      getReceipt: async (req) => {
        const rs = needReceipts();
        requiredField(req.tenant_id, 'tenant_id');
        const r = await rs.proofs.record(req.tenant_id, Number(req.record_id));
        const receipt = await rs.receipts.issue(req.tenant_id, r, { retryNow: true });
        if (!receipt) throw new DependencyUnavailableError('The receipt cannot be signed now: the vault, which delegates the receipt key, is unreachable');
        return receipt;
      },
      getReceiptProof: async (req) => {
        requiredField(req.tenant_id, 'tenant_id');
        // the proof has the message's fields and names
        return needReceipts().proofs.proof(req.tenant_id, Number(req.record_id));
      },
      getDecisionInputs: async (req) => {
        if (!decisionInputs) throw new Error('decision inputs are not configured in this audit service');
        requiredField(req.tenant_id, 'tenant_id');
        if (req.action_ids.length > MAX_DECISION_INPUTS) throw InputError.field('action_ids', `at most ${MAX_DECISION_INPUTS} action ids`, 'too_long');
        return { inputs: (await decisionInputs.byActions(req.tenant_id, req.action_ids)).map(decisionInputMessage) };
      },
    },
    logger,
  );
}
