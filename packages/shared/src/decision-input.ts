/**
 * The typed decision contract's one set of conversions (agw.decision.v1, docs/architecture.md "The
 * decision contract"): the policy input's `behavioral` object (snake_case keys, as Rego reads it) to and
 * from its message, and a stored replay input (a row of the audit service's `audit_decision_inputs`) to and
 * from `DecisionInput`. The policy service makes the message, the gateway and the managed service pass it
 * through untouched, the audit service stores and answers it, and replay reads it back. Also the anomaly
 * score's factors (policy service → gateway API).
 */
import type { decision, policy } from '@agw/proto';
import type { Selectable } from 'kysely';
import type { Database } from './db/schema';
import { InputError } from './errors';

/** input.behavioral of the policy (spec "Policy input and output"). */
export interface BehavioralInput {
  action_count_1h: number;
  action_count_24h: number;
  tool_count_24h: number;
  violation_count_24h: number;
  anomaly_score: number;
  /** -1 when the agent has no earlier action */
  last_action_seconds_ago: number;
  session_total_amount: number;
}

/** A stored replay input: a row of `audit_decision_inputs` without its tenant. */
export type DecisionInputRow = Omit<Selectable<Database['audit_decision_inputs']>, 'tenant_id'>;

export function behavioralMessage(b: BehavioralInput): decision.Behavioral {
  return {
    actionCount1h: b.action_count_1h,
    actionCount24h: b.action_count_24h,
    toolCount24h: b.tool_count_24h,
    violationCount24h: b.violation_count_24h,
    anomalyScore: b.anomaly_score,
    lastActionSecondsAgo: b.last_action_seconds_ago,
    sessionTotalAmount: b.session_total_amount,
  };
}

/** The message back to the policy input's object, keys in the order the policy service writes them. */
export function behavioralInput(m: decision.Behavioral): BehavioralInput {
  return {
    action_count_1h: m.actionCount1h,
    action_count_24h: m.actionCount24h,
    tool_count_24h: m.toolCount24h,
    violation_count_24h: m.violationCount24h,
    anomaly_score: m.anomalyScore,
    last_action_seconds_ago: m.lastActionSecondsAgo,
    session_total_amount: m.sessionTotalAmount,
  };
}

/** The message of a stored replay input (the audit service's answer to GetDecisionInputs). */
export function decisionInputMessage(r: DecisionInputRow): decision.DecisionInput {
  return {
    actionId: r.action_id,
    call: {
      agentId: r.agent_id,
      agentType: r.agent_type,
      agentVersion: r.agent_version,
      tool: r.tool,
      method: r.method,
      paramsJson: JSON.stringify(r.stored_params),
      piiDetected: r.pii_detected,
      sessionId: r.session_id ?? '',
    },
    behavioral: r.behavioral ? behavioralMessage(r.behavioral as unknown as BehavioralInput) : undefined,
    decision: r.decision,
    violations: r.violations,
    severity: r.severity,
    bundleRevision: r.bundle_revision,
    passes: r.passes,
    evaluatedAt: r.evaluated_at.toISOString(),
  };
}

/**
 * A replay input as it is stored (the audit service's append). The message comes from another service:
 * a missing call or a malformed params_json/evaluated_at is the caller's error (422), never a 500.
 */
export function decisionInputRow(m: decision.DecisionInput): DecisionInputRow {
  const c = m.call;
  if (!c) throw InputError.at(['decision_input', 'call'], 'decision_input.call is required', 'missing');
  let stored: unknown;
  try {
    stored = JSON.parse(c.paramsJson || '{}');
  } catch {
    throw InputError.at(['decision_input', 'call', 'params_json'], 'decision_input.call.params_json is not JSON', 'json_invalid');
  }
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) throw InputError.at(['decision_input', 'call', 'params_json'], 'decision_input.call.params_json must be a JSON object', 'object_type');
  const evaluatedAt = new Date(m.evaluatedAt);
  if (Number.isNaN(evaluatedAt.getTime())) throw InputError.at(['decision_input', 'evaluated_at'], 'decision_input.evaluated_at must be an ISO 8601 time', 'datetime_parsing');
  return {
    action_id: m.actionId,
    agent_id: c.agentId,
    agent_type: c.agentType,
    agent_version: c.agentVersion,
    tool: c.tool,
    method: c.method,
    session_id: c.sessionId || null,
    stored_params: stored as Record<string, unknown>,
    pii_detected: c.piiDetected,
    behavioral: m.behavioral ? (behavioralInput(m.behavioral) as unknown as Record<string, unknown>) : null,
    decision: m.decision,
    violations: m.violations,
    severity: m.severity,
    bundle_revision: m.bundleRevision,
    passes: m.passes,
    evaluated_at: evaluatedAt,
  };
}

/** The factors of an anomaly score as the API shows them (services/policy/src/behavior/anomaly-score.ts). */
export type AnomalyFactorValues = {
  burst: number;
  violation_ratio: number;
  new_tool: number;
  baseline_per_hour: number;
  action_count_1h: number;
  action_count_24h: number;
  violation_count_24h: number;
};

export function anomalyFactorsMessage(f: AnomalyFactorValues): policy.AnomalyFactors {
  return {
    burst: f.burst,
    violationRatio: f.violation_ratio,
    newTool: f.new_tool,
    baselinePerHour: f.baseline_per_hour,
    actionCount1h: f.action_count_1h,
    actionCount24h: f.action_count_24h,
    violationCount24h: f.violation_count_24h,
  };
}

/** The message back to the API's object; `{}` when the agent has no score yet. */
export function anomalyFactorValues(m: policy.AnomalyFactors | undefined): AnomalyFactorValues | Record<string, never> {
  if (!m) return {};
  return {
    burst: m.burst,
    violation_ratio: m.violationRatio,
    new_tool: m.newTool,
    baseline_per_hour: m.baselinePerHour,
    action_count_1h: m.actionCount1h,
    action_count_24h: m.actionCount24h,
    violation_count_24h: m.violationCount24h,
  };
}
