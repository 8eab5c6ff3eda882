/** gRPC adapter of the audit chain: translate messages, call the domain, nothing else. */
import { audit as pb } from '@agw/proto';
import { DependencyUnavailableError, type GrpcServiceBinding, InputError, type Logger, decisionInputMessage, decisionInputRow, fromAuditEntry, implement, recordIdOf, toAuditEntry } from '@agw/shared';
import type { DecisionCountsReads, SessionTotalsReads, StoredRecord } from '../chain/audit-record.repository';
import type { AuditChain } from '../chain/audit-chain';
import type { ChainEntry } from '../chain/record-hash';
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

function parseJson<T>(text: string, field: string, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw InputError.at([field], 'must be JSON', 'json_invalid');
  }
}

export function toEntry(e: pb.AuditEntry | undefined): ChainEntry {
  if (!e) throw InputError.at(['entry'], 'entry is required', 'missing');
  return fromAuditEntry(e, (text, field) => parseJson(text, field, {}));
}

/**
 * A record as the RPCs answer it. `id` is the tenant's record id (`recordIdOf(tenant_seq)`, 1 for its first
 * record): the global row key never leaves this service, so no caller can show it (docs/audit.md, "Record ids").
 */
export function toMessage(r: StoredRecord): pb.AuditRecord {
  return { id: recordIdOf(r.tenant_seq), tenantSeq: r.tenant_seq, prevHash: r.prev_hash, recordHash: r.record_hash, entry: toAuditEntry(r), eventQueued: false, commitMs: 0, receipt: undefined };
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
    const replay = req.decisionInput ? decisionInputRow(req.decisionInput) : undefined;
    const r = await chain.append(req.tenantId, toEntry(req.entry), { eventKind: req.eventKind || undefined, webhook: req.tenantHasWebhook ?? true, replay, appendKey: req.appendKey || undefined });
    const commitMs = performance.now() - arrived;
    // signed right after the commit, before the caller is answered: no store round trip, no HSM call (receipts.ts)
    const receipt = receipts?.onAppend ? await receipts.receipts.issue(req.tenantId, r) : undefined;
    if (req.omitEntry) return { id: recordIdOf(r.tenant_seq), tenantSeq: r.tenant_seq, prevHash: r.prev_hash, recordHash: r.record_hash, entry: undefined, eventQueued: r.event_queued, commitMs, receipt };
    return { ...toMessage(r), eventQueued: r.event_queued, commitMs, receipt };
  };
  return {
    definition: pb.AuditServiceService,
    implementation: implement(
      pb.AuditServiceService,
      {
        append,
        appendStream: append,
        listRecords: async (req) => ({
          records: (
            await chain.list(req.tenantId, { limit: Math.min(Math.max(req.limit || 200, 1), 10_000), sessionId: req.sessionId || undefined, chronological: req.chronological, memberId: req.memberId || undefined })
          ).map(toMessage),
        }),
        getByAction: async (req) => ({ records: (await chain.byAction(req.tenantId, req.actionId)).map(toMessage) }),
        verify: async (req) => {
          const v = await chain.verify(req.tenantId);
          return {
            valid: v.valid,
            recordCount: v.record_count,
            failedAtActionId: v.failed_at_action_id ?? '',
            failedAtRecordId: v.failed_at_record_id ?? 0,
            reason: v.reason ?? '',
          };
        },
        tamperSimulate: async (req) => {
          const r = await chain.tamperSimulate(req.tenantId, {
            actionId: req.actionId || undefined,
            field: req.field || undefined,
            value: req.valueJson ? parseJson(req.valueJson, 'value_json', undefined) : undefined,
          });
          return { status: 'tampered', records: 1, actionId: r.action_id };
        },
        tamperRestore: async (req) => ({ status: 'restored', records: await chain.tamperRestore(req.tenantId), actionId: '' }),
        recordErasure: async (req) => {
          if (!erasures) throw new Error('erasure statements are not configured in this audit service');
          const r = await erasures.record(req.tenantId, { subjectId: req.subjectId, keyHandle: req.keyHandle, erasedAt: req.erasedAt, recordsAffected: Number(req.recordsAffected) });
          return { record: toMessage(r.record), note: r.note, keyName: r.keyName, vkey: r.vkey };
        },
        sessionTotals: async (req) => ({
          totals: (await sessionTotals.totals(req.tenantId, req.sessionIds)).map((t) => ({ sessionId: t.session_id, governed: t.governed, observed: t.observed, denied: t.denied, pending: t.pending })),
        }),
        decisionCounts: async (req) => {
          if (!decisionCounts) throw new Error('decision counts are not configured in this audit service');
          return { counts: await decisionCounts.counts(req.tenantId, req.days) };
        },
        getReceipt: async (req) => {
          const rs = needReceipts();
          if (!req.tenantId) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
          const r = await rs.proofs.record(req.tenantId, Number(req.recordId));
          const receipt = await rs.receipts.issue(req.tenantId, r, { retryNow: true });
          if (!receipt) throw new DependencyUnavailableError('The receipt cannot be signed now: the vault, which delegates the receipt key, is unreachable');
          return receipt;
        },
        getReceiptProof: async (req) => {
          if (!req.tenantId) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
          const p = await needReceipts().proofs.proof(req.tenantId, Number(req.recordId));
          return {
            status: p.status,
            recordId: p.record_id,
            leafIndex: p.leaf_index,
            leafHash: p.leaf_hash,
            recordHash: p.record_hash,
            treeSize: p.tree_size,
            proof: p.proof,
            checkpoint: p.checkpoint,
            mergeBy: p.merge_by,
            maxMergeDelaySeconds: p.max_merge_delay_seconds,
          };
        },
        getDecisionInputs: async (req) => {
          if (!decisionInputs) throw new Error('decision inputs are not configured in this audit service');
          if (!req.tenantId) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
          if (req.actionIds.length > MAX_DECISION_INPUTS) throw InputError.field('action_ids', `at most ${MAX_DECISION_INPUTS} action ids`, 'too_long');
          return { inputs: (await decisionInputs.byActions(req.tenantId, req.actionIds)).map(decisionInputMessage) };
        },
      },
      logger,
    ),
  };
}
