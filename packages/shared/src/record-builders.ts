/**
 * The record builders: the only places a full `ActionRecord` (action-record.ts) is written out. One per
 * kind of record, each setting what its kind implies, so a call site says only what it knows:
 * - `governedRecord`: a governed call's decision (source `mcp_governed`): the gateway's pipeline, an
 *   approved call executed later, a managed session's confirmation request;
 * - `observedRecord`: tool use the fleet saw but did not decide (source `mcp_observed`, decision
 *   `observed`, executed by the agent itself);
 * - `controlPlaneRecord`: a fact of the control plane (source `control_plane`): session events, subject
 *   erasures, federated tool quarantines;
 * - `humanDecisionRecord`: a human's decision on a queued action, or its expiry (a control-plane record of
 *   the queued action's facts).
 * Every field of the record is set once, in `actionRecord` below; a builder passes its kind's values and
 * defaults. The records are hashed into the chain (docs/audit.md): a builder must give every field a
 * value (`null`, never `undefined`, which the canonical JSON would leave out) and pass objects through
 * unchanged (params, details: the gateway reuses the JSON text it made of the very params object).
 */
import type { ActionRecord } from './action-record';
import type { ApprovalRow } from './approvals/approval.repository';

/** Who acted, on what, in which session and when: what every record of one action shares, whatever is decided. */
export type ActionFacts = Pick<ActionRecord, 'action_id' | 'agent_id' | 'agent_type' | 'agent_version' | 'tool' | 'method' | 'session_id'> & {
  /** ISO 8601 UTC with milliseconds; the moment the record is built when left out */
  requested_at?: string;
};

/** What every kind of record says about the outcome (params as stored: personal data already encrypted). */
type Outcome = Pick<ActionRecord, 'params' | 'violations' | 'severity' | 'details'>;

/** A governed call's decision: an allowed call says who executes it; a queued one always requires a human. */
export type GovernedDecision = Outcome & {
  bundle_revision: string;
  /** null when left out */
  alert_tier?: string | null;
} & (
    | { decision: 'allow'; execution_mode: 'agent_direct' | 'gateway_brokered'; /** false when left out */ requires_human?: boolean }
    | { decision: 'deny'; /** false when left out */ requires_human?: boolean }
    | { decision: 'requires_human' }
  );

/** A control-plane fact: its decision names what happened (allow, deny, quarantine, …). */
export type ControlPlaneFact<D extends string> = Outcome & {
  decision: D;
  bundle_revision: string;
  /** null when left out */
  alert_tier?: string | null;
  /** false when left out */
  requires_human?: boolean;
  /** null when left out */
  execution_mode?: string | null;
};

/** Observed tool use: what was seen and how unusual it looked. */
export type ObservedUse = Outcome;

export type GovernedRecord = ActionRecord & { source: 'mcp_governed'; decision: GovernedDecision['decision'] };
export type ObservedRecord = ActionRecord & { source: 'mcp_observed'; decision: 'observed' };
export type ControlPlaneRecord<D extends string = string> = ActionRecord & { source: 'control_plane'; decision: D };

/** The one place each field of a record is set. */
function actionRecord<S extends string, D extends string>(
  source: S,
  f: ActionFacts,
  o: Outcome & { decision: D; bundle_revision: string; alert_tier: string | null; requires_human: boolean; execution_mode: string | null },
): ActionRecord & { source: S; decision: D } {
  return {
    action_id: f.action_id,
    agent_id: f.agent_id,
    agent_type: f.agent_type,
    agent_version: f.agent_version,
    tool: f.tool,
    method: f.method,
    params: o.params,
    decision: o.decision,
    violations: o.violations,
    severity: o.severity,
    alert_tier: o.alert_tier,
    requires_human: o.requires_human,
    execution_mode: o.execution_mode,
    source,
    session_id: f.session_id,
    bundle_revision: o.bundle_revision,
    details: o.details,
    requested_at: f.requested_at ?? new Date().toISOString(),
  };
}

/**
 * A governed call's decision (source `mcp_governed`). A call queued for a human (`requires_human`) always
 * has `requires_human` true; only an allowed call has an execution mode (null otherwise); the alert tier
 * is null unless given.
 */
export function governedRecord(f: ActionFacts, d: GovernedDecision): GovernedRecord {
  return actionRecord('mcp_governed', f, {
    params: d.params,
    decision: d.decision,
    violations: d.violations,
    severity: d.severity,
    details: d.details,
    bundle_revision: d.bundle_revision,
    alert_tier: d.alert_tier ?? null,
    requires_human: d.decision === 'requires_human' ? true : (d.requires_human ?? false),
    execution_mode: d.decision === 'allow' ? d.execution_mode : null,
  });
}

/**
 * Tool use seen, not decided (source `mcp_observed`): decision `observed`, executed by the agent itself
 * (`agent_direct`), no policy bundle (`observed`), no alert tier, no human.
 */
export function observedRecord(f: ActionFacts, u: ObservedUse): ObservedRecord {
  return actionRecord('mcp_observed', f, {
    params: u.params,
    decision: 'observed' as const,
    violations: u.violations,
    severity: u.severity,
    details: u.details,
    bundle_revision: 'observed',
    alert_tier: null,
    requires_human: false,
    execution_mode: 'agent_direct',
  });
}

/** A control-plane fact (source `control_plane`): no alert tier, no human, no execution unless given. */
export function controlPlaneRecord<D extends string>(f: ActionFacts, c: ControlPlaneFact<D>): ControlPlaneRecord<D> {
  return actionRecord('control_plane', f, {
    params: c.params,
    decision: c.decision,
    violations: c.violations,
    severity: c.severity,
    details: c.details,
    bundle_revision: c.bundle_revision,
    alert_tier: c.alert_tier ?? null,
    requires_human: c.requires_human ?? false,
    execution_mode: c.execution_mode ?? null,
  });
}

/** The fields of a queued action (`approvals` row) a human's decision on it is recorded with. */
export type QueuedAction = Pick<ApprovalRow, 'action_id' | 'agent_id' | 'agent_type' | 'agent_version' | 'tool' | 'method' | 'params' | 'opa_result' | 'session_id'>;

/**
 * A human's decision on a queued action, or its expiry (a control-plane record): the queued action's
 * facts, params, violations and severity; `requires_human` true; bundle revision `human-approval` (what
 * bound the decision to the call goes in `details.approval_binding`); executed only when given. A
 * four-eyes approval that does not complete the quorum is recorded with decision `requires_human` (the
 * action still waits for humans) and `details.approval` `vote`.
 */
export function humanDecisionRecord<D extends 'allow' | 'deny' | 'requires_human'>(
  q: QueuedAction,
  d: { decision: D; details: Record<string, unknown>; requested_at: string; execution_mode?: string | null },
): ControlPlaneRecord<D> {
  return controlPlaneRecord(
    { action_id: q.action_id, agent_id: q.agent_id, agent_type: q.agent_type, agent_version: q.agent_version, tool: q.tool, method: q.method, session_id: q.session_id, requested_at: d.requested_at },
    {
      params: q.params,
      decision: d.decision,
      violations: q.opa_result.violations,
      severity: q.opa_result.severity,
      details: d.details,
      bundle_revision: 'human-approval',
      requires_human: true,
      execution_mode: d.execution_mode,
    },
  );
}
