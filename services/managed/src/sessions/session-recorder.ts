/**
 * Audit records the managed service appends to the tenant's chain:
 * - observed built-in tool use (source `mcp_observed`, decision `observed`), with its anomaly assessment;
 *   its `decisions.<tenant>.observed` event is committed with the record (the audit service's outbox);
 * - control-plane facts of a session (source `control_plane`): creation with its system_prompt_hash,
 *   interrupts (their bus events are the session events: `sessions.<tenant>.interrupted`).
 * Observed records are idempotent: the action id is derived from (session, platform event id), so an
 * event seen again after a reconnect or by a resuming replica finds its record and appends nothing.
 */
import { createHash } from 'node:crypto';
import { mayContainPii } from '@agw/pii';
import { toAuditEntry } from '@agw/shared';
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
}

export class SessionRecorder {
  constructor(
    private readonly audit: AuditClient,
    private readonly vault: VaultClient,
  ) {}

  /** Record one observed tool use; false when it was recorded before (a replayed event). */
  async observed(s: SessionRow, event: { id: string; name: string; input: Record<string, unknown> }, anomaly: AnomalyAssessment): Promise<boolean> {
    const actionId = derivedActionId(`${s.id}:${event.id}`);
    const existing = await this.audit.getByAction({ tenantId: s.tenant_id, actionId });
    if (existing.records.length) return false;
    // personal data in the tool input is encrypted per data subject before anything is stored
    let params: Record<string, unknown> = event.input;
    if (mayContainPii(params)) {
      const r = await this.vault.protectParams({ tenantId: s.tenant_id, actionId, paramsJson: JSON.stringify(params) });
      params = JSON.parse(r.storedParamsJson) as Record<string, unknown>;
    }
    const severity = anomaly.score >= 0.8 ? 'high' : anomaly.score >= 0.5 ? 'medium' : anomaly.score > 0 ? 'low' : 'none';
    await this.append(s, {
      actionId,
      tool: event.name,
      method: toolFamily(event.name),
      params,
      decision: 'observed',
      severity,
      violations: anomaly.signals.map((x) => `anomaly_${x.id}`),
      source: 'mcp_observed',
      eventKind: 'observed',
      bundleRevision: 'observed',
      details: { platform_event_id: event.id, anomaly: { score: anomaly.score, signals: anomaly.signals } },
    });
    return true;
  }

  async control(s: Pick<SessionRow, 'id' | 'tenant_id' | 'agent_id'>, f: ControlFact): Promise<void> {
    await this.append(s, { ...f, source: 'control_plane' });
  }

  private async append(
    s: Pick<SessionRow, 'id' | 'tenant_id' | 'agent_id'>,
    r: Omit<ControlFact, 'decision'> & { decision: string; source: string; eventKind?: 'observed' },
  ): Promise<void> {
    await this.audit.append({
      tenantId: s.tenant_id,
      entry: toAuditEntry({
        action_id: r.actionId,
        agent_id: s.agent_id,
        agent_type: 'managed',
        agent_version: '1.0.0',
        tool: r.tool,
        method: r.method,
        params: r.params,
        decision: r.decision,
        violations: r.violations,
        severity: r.severity,
        alert_tier: null,
        requires_human: false,
        execution_mode: r.source === 'mcp_observed' ? 'agent_direct' : null,
        source: r.source,
        session_id: s.id,
        bundle_revision: r.bundleRevision,
        details: r.details,
        requested_at: new Date().toISOString(),
      }),
      // an observed record's decision event is written to the outbox in the record's transaction and
      // published by the audit service; control-plane facts have their session events instead
      eventKind: r.eventKind ?? '',
      replayJson: '',
      // an observed tool use is recorded once even when two consumers or a restart replay its event
      // between the look-up above and this append: the key is its derived action id
      appendKey: r.source === 'mcp_observed' ? `observed:${r.actionId}` : '',
    });
  }
}
