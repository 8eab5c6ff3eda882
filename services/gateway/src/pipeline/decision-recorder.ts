/**
 * Steps 8 and 9 of every decision: append it to the tenant's hash chain (the answer waits for the
 * commit). The decision event for webhooks, anchoring and sessions is committed to the outbox in the same
 * transaction and published by the audit service right after (off the request path); an audit service
 * that does not take it (`event_queued` false) leaves the publish to this recorder, as before.
 * The policy's replay input, when given, is committed in that transaction too: one commit per call.
 */
import type { audit } from '@agw/proto';
import { type ActionRecord, type DecisionKind, toAuditEntry } from '@agw/shared';
import type { AuditClient } from '../clients/grpc-clients';
import type { DecisionPublisher } from '../events/decision-publisher';

/** The fleet's action record (`@agw/shared`), with the decisions and sources the gateway records. */
export interface DecisionRecord extends ActionRecord {
  decision: 'allow' | 'deny' | 'requires_human' | 'observed';
  source: 'mcp_governed' | 'mcp_observed' | 'control_plane';
}

export class DecisionRecorder {
  constructor(
    private readonly audit: AuditClient,
    private readonly publisher: DecisionPublisher,
  ) {}

  /** Resolves to the stored record's id, sequence number, hashes and event_queued (its `entry` is not sent back). */
  async record(tenantId: string, r: DecisionRecord, kind: DecisionKind, timings?: Record<string, number>, replayJson = ''): Promise<audit.AuditRecord> {
    const t0 = performance.now();
    const stored = await this.audit.append({
      tenantId,
      eventKind: kind,
      replayJson,
      entry: toAuditEntry(r),
      // only the id and hashes are used: the record does not come back over the wire
      omitEntry: true,
    });
    const t1 = performance.now();
    if (!stored.eventQueued) await this.publisher.publish({
      kind,
      tenant_id: tenantId,
      action_id: r.action_id,
      agent_id: r.agent_id,
      agent_type: r.agent_type,
      tool: r.tool,
      method: r.method,
      decision: r.decision,
      violations: r.violations,
      severity: r.severity,
      alert_tier: r.alert_tier,
      requires_human: r.requires_human,
      source: r.source,
      session_id: r.session_id,
      record_id: stored.id,
      record_hash: stored.recordHash,
      requested_at: r.requested_at,
    });
    if (timings) {
      timings.audit = (timings.audit ?? 0) + (t1 - t0);
      timings.publish = (timings.publish ?? 0) + (performance.now() - t1);
    }
    return stored;
  }
}
