/**
 * The typed decision contract's one set of conversions (agw.decision.v1, docs/architecture.md "The
 * decision contract"): the policy input's `behavioral` object (snake_case keys, as Rego reads it) to and
 * from its message, a stored replay input (a row of the audit service's `audit_decision_inputs`) from a
 * record and its `DecisionFacts`, and the row to `DecisionInput`. The policy service makes the facts, the
 * gateway and the managed service pass them through untouched with the record, the audit service stores
 * the replay input and answers it, and replay reads it back. Also the anomaly
 * score's factors (policy service → gateway API).
 */
import type { decision, policy } from '@agw/proto';
import type { Selectable } from 'kysely';
import type { ActionRecord } from './action-record';
import type { Database } from './db/schema';
import { InputError } from './errors';
import { jsonField } from './json-text';

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
    action_count_1h: b.action_count_1h,
    action_count_24h: b.action_count_24h,
    tool_count_24h: b.tool_count_24h,
    violation_count_24h: b.violation_count_24h,
    anomaly_score: b.anomaly_score,
    last_action_seconds_ago: b.last_action_seconds_ago,
    session_total_amount: b.session_total_amount,
  };
}

/** The message back to the policy input's object, keys in the order the policy service writes them. */
export function behavioralInput(m: decision.Behavioral): BehavioralInput {
  return {
    action_count_1h: m.action_count_1h,
    action_count_24h: m.action_count_24h,
    tool_count_24h: m.tool_count_24h,
    violation_count_24h: m.violation_count_24h,
    anomaly_score: m.anomaly_score,
    last_action_seconds_ago: m.last_action_seconds_ago,
    session_total_amount: m.session_total_amount,
  };
}

/** The message of a stored replay input (the audit service's answer to GetDecisionInputs). */
export function decisionInputMessage(r: DecisionInputRow): decision.DecisionInput {
  return {
    action_id: r.action_id,
    call: {
      agent_id: r.agent_id,
      agent_type: r.agent_type,
      agent_version: r.agent_version,
      tool: r.tool,
      method: r.method,
      ...jsonField('params', r.stored_params),
      pii_detected: r.pii_detected,
      session_id: r.session_id ?? '',
    },
    behavioral: r.behavioral ? behavioralMessage(r.behavioral as unknown as BehavioralInput) : undefined,
    decision: r.decision,
    violations: r.violations,
    severity: r.severity,
    bundle_revision: r.bundle_revision,
    passes: r.passes,
    evaluated_at: r.evaluated_at.toISOString(),
  };
}

/**
 * A replay input as it is stored (the audit service's append): the call as its record holds it (the agent,
 * the tool and method, the session, the stored params, the bundle revision) with what the record lacks
 * (`DecisionFacts`: the policy's verdict, whether the params held personal data, the behavioral data, the
 * passes, the decision time). The facts come from another service: a malformed evaluated_at is the caller's
 * error (422), never a 500.
 */
export function decisionInputRow(r: ActionRecord, f: decision.DecisionFacts): DecisionInputRow {
  const evaluatedAt = new Date(f.evaluated_at);
  if (Number.isNaN(evaluatedAt.getTime())) throw InputError.at(['decision_facts', 'evaluated_at'], 'decision_facts.evaluated_at must be an ISO 8601 time', 'datetime_parsing');
  return {
    action_id: r.action_id,
    agent_id: r.agent_id,
    agent_type: r.agent_type,
    agent_version: r.agent_version,
    tool: r.tool,
    method: r.method,
    session_id: r.session_id,
    stored_params: r.params,
    pii_detected: f.pii_detected,
    behavioral: f.behavioral ? (behavioralInput(f.behavioral) as unknown as Record<string, unknown>) : null,
    decision: f.decision,
    violations: f.violations,
    severity: f.severity,
    bundle_revision: r.bundle_revision,
    passes: f.passes,
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
    violation_ratio: f.violation_ratio,
    new_tool: f.new_tool,
    baseline_per_hour: f.baseline_per_hour,
    action_count_1h: f.action_count_1h,
    action_count_24h: f.action_count_24h,
    violation_count_24h: f.violation_count_24h,
  };
}

/** The message back to the API's object; `{}` when the agent has no score yet. */
export function anomalyFactorValues(m: policy.AnomalyFactors | undefined): AnomalyFactorValues | Record<string, never> {
  if (!m) return {};
  return {
    burst: m.burst,
    violation_ratio: m.violation_ratio,
    new_tool: m.new_tool,
    baseline_per_hour: m.baseline_per_hour,
    action_count_1h: m.action_count_1h,
    action_count_24h: m.action_count_24h,
    violation_count_24h: m.violation_count_24h,
  };
}
