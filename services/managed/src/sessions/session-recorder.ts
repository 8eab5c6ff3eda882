/**
 * Audit records the managed service appends to the tenant's chain:
 * - observed built-in tool use (source `mcp_observed`, decision `observed`), with its anomaly assessment;
 *   its `decisions.<tenant>.observed` event is committed with the record (the audit service's outbox);
 * - control-plane facts of a session (source `control_plane`): creation with its system_prompt_hash,
 *   interrupts (their bus events are the session events: `sessions.<tenant>.interrupted`), the answers to
 *   the platform's confirmation requests;
 * - governed decisions taken on a confirmation request (source `mcp_governed`: a policy deny, a call queued
 *   for a human), with their decision events and the policy's replay input, like the gateway's.
 * Observed records are idempotent: the action id is derived from (session, platform event id), so an
 * event seen again after a reconnect or by a resuming replica finds its record and appends nothing.
 */
import { createHash } from 'node:crypto';
import type { decision } from '@agw/proto';
import { mayContainPii } from '@agw/pii';
import { type ActionFacts, type ActionRecord, controlPlaneRecord, governedRecord, jsonField, jsonOf, objectFromAnswerJson, observedRecord, toAuditEntry } from '@agw/shared';
import type { AuditClient, VaultClient } from '../clients';
import type { AnomalyAssessment } from '../anomaly/anomaly-scorer';
import { toolFamily } from '../anomaly/anomaly-scorer';
import type { SessionRow } from './session.repository';

/** A UUID (v5 layout) derived from a name: the same platform event always gets the same action id. */
export function derivedActionId(name: string): string {
  const h = createHash('sha1').update(`agw-managed:${name}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export interface ControlFact {
  actionId: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  decision: 'allow' | 'deny';
  severity: string;
  violations: string[];
  details: Record<string, unknown>;
  bundleRevision: string;
  /** idempotency key of the append (a fact sent again after a lost answer is recorded once) */
  appendKey?: string;
}

/** A governed decision on a platform confirmation request (confirmations/tool-confirmations.ts). */
export interface GovernedFact {
  actionId: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  decision: 'deny' | 'requires_human';
  violations: string[];
  severity: string;
  alertTier: string | null;
  bundleRevision: string;
  details: Record<string, unknown>;
  /** what the record lacks for the policy's replay input (EvaluateResponse.decision_facts), committed with it */
  decisionFacts: decision.DecisionFacts | undefined;
  eventKind: 'denied' | 'pending';
  requestedAt: Date;
}

export class SessionRecorder {
  constructor(
    private readonly audit: AuditClient,
    private readonly vault: VaultClient,
  ) {}

  /** Record one observed tool use; false when it was recorded before (a replayed event). */
  async observed(s: SessionRow, event: { id: string; name: string; input: Record<string, unknown> }, anomaly: AnomalyAssessment): Promise<boolean> {
    const actionId = derivedActionId(`${s.id}:${event.id}`);
    const existing = await this.audit.getByAction({ tenant_id: s.tenant_id, action_id: actionId });
    if (existing.records.length) return false;
    // personal data in the tool input is encrypted per data subject before anything is stored
    let params: Record<string, unknown> = event.input;
    if (mayContainPii(params)) {
      const r = await this.vault.protectParams({ tenant_id: s.tenant_id, action_id: actionId, ...jsonField('params', params) });
      params = objectFromAnswerJson(jsonOf(r, 'stored_params'), 'stored_params');
    }
    const severity = anomaly.score >= 0.8 ? 'high' : anomaly.score >= 0.5 ? 'medium' : anomaly.score > 0 ? 'low' : 'none';
    const record = observedRecord(sessionFacts(s, actionId, event.name, toolFamily(event.name)), {
      params,
      violations: anomaly.signals.map((x) => `anomaly_${x.id}`),
      severity,
      details: { platform_event_id: event.id, anomaly: { score: anomaly.score, signals: anomaly.signals } },
    });
    // its decision event is written to the outbox in the record's transaction and published by the audit
    // service; it is recorded once even when two consumers or a restart replay its event between the
    // look-up above and this append: the key is its derived action id
    await this.append(s, record, { eventKind: 'observed', appendKey: `observed:${actionId}` });
    return true;
  }

  /** A control-plane fact of a session (no decision event: it has its session events instead). */
  async control(s: Pick<SessionRow, 'id' | 'tenant_id' | 'agent_id'>, f: ControlFact): Promise<void> {
    const record = controlPlaneRecord(sessionFacts(s, f.actionId, f.tool, f.method), {
      params: f.params,
      decision: f.decision,
      violations: f.violations,
      severity: f.severity,
      bundle_revision: f.bundleRevision,
      details: f.details,
    });
    await this.append(s, record, { appendKey: f.appendKey });
  }

  /** A governed call's decision taken on a confirmation request; idempotent by its action id. */
  async governed(s: Pick<SessionRow, 'id' | 'tenant_id' | 'agent_id'>, f: GovernedFact): Promise<void> {
    const record = governedRecord(sessionFacts(s, f.actionId, f.tool, f.method, f.requestedAt.toISOString()), {
      params: f.params,
      decision: f.decision,
      violations: f.violations,
      severity: f.severity,
      alert_tier: f.alertTier,
      bundle_revision: f.bundleRevision,
      details: f.details,
    });
    await this.append(s, record, { eventKind: f.eventKind, decisionFacts: f.decisionFacts, appendKey: `governed:${f.actionId}` });
  }

  private async append(s: Pick<SessionRow, 'tenant_id'>, record: ActionRecord, o: { eventKind?: 'observed' | 'denied' | 'pending'; decisionFacts?: decision.DecisionFacts; appendKey?: string }): Promise<void> {
    await this.audit.append({
      tenant_id: s.tenant_id,
      entry: toAuditEntry(record),
      event_kind: o.eventKind ?? '',
      decision_facts: o.decisionFacts,
      append_key: o.appendKey ?? '',
    });
  }
}

/** The facts of a session's action: the session's agent, as the managed agent it runs (`managed` 1.0.0). */
function sessionFacts(s: Pick<SessionRow, 'id' | 'agent_id'>, actionId: string, tool: string, method: string, requestedAt?: string): ActionFacts {
  return { action_id: actionId, agent_id: s.agent_id, agent_type: 'managed', agent_version: '1.0.0', tool, method, session_id: s.id, requested_at: requestedAt };
}
