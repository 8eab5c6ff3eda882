/** The per-tenant hash chain: append, read, verify, and the tamper demo. Transport-free. */
import { randomUUID } from 'node:crypto';
import { type DecisionInputRow, type DecisionKind, ForbiddenError, InputError, NotFoundError, decisionEventOf, decisionKinds, subjects } from '@agw/shared';
import type { AuditRecordRepository, BatchAppended, StoredRecord } from './audit-record.repository';
import { type ParallelVerifyOptions, type VerifyResult, verifyChain } from './chain-verify';
import { GroupCommit } from './group-commit';
import { type ChainEntry, canonicalContent } from './record-hash';

export type { VerifyResult };

/** What an append may commit with its record, in the same transaction. */
export interface AppendExtras {
  /** write the decision event of this kind to the outbox (published after the commit) */
  eventKind?: string;
  /** false: the tenant has no webhook URL, the event goes under `nohook.decisions.` (default true) */
  webhook?: boolean;
  /** the decision's replay input for this action (written to audit_decision_inputs with the record) */
  replay?: DecisionInputRow;
  /** idempotency key chosen by the caller for this append and reused on its retries (docs/audit.md) */
  appendKey?: string;
}

export interface AuditChainOptions {
  tamperDemo: boolean;
  /** JetStream subject prefix of the fleet (AGW_STREAM_PREFIX) for outbox events */
  streamPrefix?: string;
  /** most appends per group commit */
  maxBatch?: number;
  /** called after each committed batch (the event relay publishes its outbox events) */
  onCommitted?: (appended: BatchAppended[]) => void;
  /** long chains verified in parallel ranges (worker threads); without it, in this thread */
  verify?: ParallelVerifyOptions;
}


export class AuditChain {
  private readonly group: GroupCommit;

  constructor(
    private readonly records: AuditRecordRepository,
    private readonly options: AuditChainOptions,
  ) {
    this.group = new GroupCommit(records, { maxBatch: options.maxBatch, onCommitted: options.onCommitted });
  }

  /**
   * Append to the tenant's chain; resolves once the record (and the extras) are committed. Concurrent
   * appends share one transaction (group-commit.ts).
   */
  async append(tenantId: string, entry: ChainEntry, extras: AppendExtras = {}): Promise<StoredRecord & { event_queued: boolean }> {
    if (!tenantId) throw InputError.field('tenant_id', 'tenant_id is required', 'missing');
    let event;
    if (extras.eventKind) {
      if (!(decisionKinds as readonly string[]).includes(extras.eventKind)) throw InputError.field('event_kind', `event_kind must be one of ${decisionKinds.join(', ')}`, 'enum');
      const kind = extras.eventKind as DecisionKind;
      event = {
        subject: subjects.decision(this.options.streamPrefix ?? '', tenantId, kind, entry.session_id, extras.webhook ?? true),
        event: decisionEventOf(randomUUID(), kind, tenantId, entry),
      };
    }
    if (extras.appendKey !== undefined && !/^[A-Za-z0-9._:-]{1,128}$/.test(extras.appendKey)) throw InputError.field('append_key', 'append_key is 1-128 characters of A-Z a-z 0-9 . _ : -', 'pattern');
    const r = await this.group.append({ tenantId, entry, canonical: canonicalContent(entry), replay: extras.replay, event, appendKey: extras.appendKey });
    // a replayed append's event went to the outbox with the first attempt's commit
    return { ...r.record, event_queued: r.outboxId !== null || (r.replayed && event !== undefined) };
  }

  list(tenantId: string, o: { limit: number; sessionId?: string; chronological?: boolean; memberId?: string }): Promise<StoredRecord[]> {
    return this.records.list(tenantId, o);
  }

  /** The record with the tenant's record id `recordId` (1 for its first record), or undefined. */
  byRecordId(tenantId: string, recordId: number): Promise<StoredRecord | undefined> {
    if (!Number.isSafeInteger(recordId) || recordId < 1) throw InputError.at(['path', 'record_id'], 'record_id must be an integer of at least 1', 'int_parsing');
    return this.records.bySeq(tenantId, recordId - 1);
  }

  byAction(tenantId: string, actionId: string): Promise<StoredRecord[]> {
    return this.records.byAction(tenantId, actionId);
  }

  /** Verify the tenant's whole chain (chain-verify.ts: what is checked, and how it is fast). */
  async verify(tenantId: string): Promise<VerifyResult> {
    return verifyChain(this.records, tenantId, await this.records.chainLength(tenantId), this.options.verify);
  }

  async tamperSimulate(tenantId: string, req: { actionId?: string; field?: string; value?: unknown }): Promise<{ action_id: string }> {
    this.assertDemo();
    const target = req.actionId ? (await this.records.byAction(tenantId, req.actionId))[0] : await this.records.latest(tenantId);
    if (!target) throw new NotFoundError(req.actionId ? 'Action not found' : 'The audit log is empty: nothing to tamper with');
    const field = req.field ?? 'decision';
    let patch: Parameters<AuditRecordRepository['tamper']>[2];
    if (field === 'params') patch = { params: JSON.stringify(req.value ?? { tampered: true }) };
    else if (field === 'decision' || field === 'tool' || field === 'method') {
      const fallback = field === 'decision' ? (target.decision === 'allow' ? 'deny' : 'allow') : `${target[field]}_tampered`;
      patch = { [field]: typeof req.value === 'string' ? req.value : fallback };
    } else throw InputError.field('field', 'field must be one of decision, tool, method, params', 'enum');
    await this.records.tamper(tenantId, target.id, patch);
    return { action_id: target.action_id };
  }

  async tamperRestore(tenantId: string): Promise<number> {
    this.assertDemo();
    return this.records.restore(tenantId);
  }

  private assertDemo(): void {
    if (!this.options.tamperDemo) throw new ForbiddenError('The tamper demo is disabled in this deployment');
  }
}
