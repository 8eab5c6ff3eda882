/**
 * Steps 8 and 9 of every decision: append it to the tenant's hash chain (the answer waits for the
 * commit). The decision event for webhooks, anchoring and sessions is committed to the outbox in the same
 * transaction and published by the audit service right after (off the request path); an audit service
 * that does not take it (`event_queued` false) leaves the publish to this recorder, as before.
 * The policy's replay input, when its facts are given, is made from the record and them and committed in
 * that transaction too: one commit per call, the stored params sent once (in the record).
 */
import { randomUUID } from 'node:crypto';
import type { audit, decision } from '@agw/proto';
import { type ActionRecord, type Conn, type DecisionKind, type Json, decisionEventOf, toAuditEntry, toJson } from '@agw/shared';
import type { AuditClient } from '../clients/grpc-clients';
import type { DecisionPublisher } from '../events/decision-publisher';
import type { CallEvidence } from './call-receipt';

/**
 * A call's params as their Json message (toJson), made once per params object: the policy request and the audit entry
 * carry the same text. Params are never mutated after validation (the stored params are a new object).
 */
const paramsJson = new WeakMap<object, Json>();
export function paramsJsonOf(params: Record<string, unknown>): Json {
  let s = paramsJson.get(params);
  if (s === undefined) {
    s = toJson(params)!;
    paramsJson.set(params, s);
  }
  return s;
}

/** The fleet's action record (`@agw/shared`), with the decisions and sources the gateway records. */
export interface DecisionRecord extends ActionRecord {
  decision: 'allow' | 'deny' | 'requires_human' | 'observed' | 'changed';
  source: 'mcp_governed' | 'mcp_observed' | 'control_plane';
}

export interface RecorderOptions {
  /** how long an append that found the audit service unreachable is sent again (same key) before the call fails */
  retryBudgetMs: number;
  /**
   * Whether the tenant has a webhook URL (SettingsService.hasWebhook): false sends the decision event under
   * `nohook.decisions.`, which the webhook service never receives. Absent: true for every tenant. `conn`:
   * the transaction of a caller that records inside one (read through it, not from the pool).
   */
  hasWebhook?: (tenantId: string, conn?: Conn) => Promise<boolean>;
}

export interface RecordOptions {
  /** the call's step timings (Server-Timing): audit, audit_commit, publish are added */
  timings?: Record<string, number>;
  /** what the record lacks for the policy's replay input (EvaluateResponse.decision_facts), committed with it */
  decisionFacts?: decision.DecisionFacts;
  /**
   * the caller's transaction when it records inside one (approval-expiry.ts): the tenant's settings are read
   * through it, never through a second connection of the same pool
   */
  conn?: Conn;
  /** false: the record only, no decision event (a four-eyes vote that webhooks and sessions need not hear of) */
  event?: false;
  /**
   * the call's arguments hash (call-receipt.ts): added to the record's details as `arguments_sha256`; the
   * receipt the audit service signed for the record is kept in it
   */
  evidence?: CallEvidence;
}

export class DecisionRecorder {
  constructor(
    private readonly audit: AuditClient,
    private readonly publisher: DecisionPublisher,
    private readonly o: RecorderOptions = { retryBudgetMs: 15_000 },
  ) {}

  /**
   * One append under one idempotency key, sent again while the audit service or its Postgres is unreachable
   * (killed, or the answer lost with a connection, possibly after the commit) until `retryBudgetMs` is spent: the
   * chain answers a key it has written with that record, so the call is answered with exactly one record
   * or fails with none written by a later attempt (docs/audit.md, "Idempotent appends").
   */
  private append(request: audit.AppendRequest): Promise<audit.AuditRecord> {
    // the audit service unreachable, or its Postgres (the outcome of the commit unknown): the same key again
    // (the client's one retry loop, packages/shared/src/grpc-retry.ts: 50 ms doubling up to 1 s, within the budget)
    return this.audit.appendStream(request, { retry: { budgetMs: this.o.retryBudgetMs, delayMs: 50, maxDelayMs: 1000 } });
  }

  /** Resolves to the stored record's id, sequence number, hashes and event_queued (its `entry` is not sent back). */
  async record(tenantId: string, r: DecisionRecord, kind: DecisionKind, o: RecordOptions = {}): Promise<audit.AuditRecord> {
    const { timings, decisionFacts, conn, evidence } = o;
    const withEvent = o.event !== false;
    if (evidence) r = { ...r, details: { ...r.details, arguments_sha256: evidence.argumentsSha256 } };
    const t0 = performance.now();
    const stored = await this.append({
      tenant_id: tenantId,
      event_kind: withEvent ? kind : '',
      tenant_has_webhook: this.o.hasWebhook ? await this.o.hasWebhook(tenantId, conn) : true,
      decision_facts: decisionFacts,
      entry: toAuditEntry(r, paramsJsonOf(r.params)),
      // only the id and hashes are used: the record does not come back over the wire
      omit_entry: true,
      append_key: randomUUID(),
    });
    const t1 = performance.now();
    if (evidence) evidence.receipt = stored.receipt;
    if (withEvent && !stored.event_queued) await this.publisher.publish({ ...decisionEventOf(randomUUID(), kind, tenantId, r), record_id: stored.id, record_hash: stored.record_hash });
    if (timings) {
      timings.audit = (timings.audit ?? 0) + (t1 - t0);
      // the part of `audit` the audit service spent from the append's arrival to its commit (the rest: the
      // hop each way); an older audit service answers 0
      if (stored.commit_ms > 0) timings.audit_commit = (timings.audit_commit ?? 0) + stored.commit_ms;
      timings.publish = (timings.publish ?? 0) + (performance.now() - t1);
    }
    return stored;
  }
}
