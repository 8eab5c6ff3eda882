/**
 * The tenant's policy decisions as OPA decision-log events, one JSON object per line (docs/policy.md,
 * "Decision logs in OPA's format"): what a decision-log receiver, an OPA console or a replay tool built for
 * OPA reads. Each event is one policy decision: an exported record that has its replay input (the input
 * committed with the record, `audit_decision_inputs`); records the policy did not decide (a gateway
 * constraint, a quarantined federated tool, a failure mode, a human's approval) are no OPA decisions.
 *
 * The fields are OPA's (https://www.openpolicyagent.org/docs/management-decision-logs): `decision_id`,
 * `path`, `input`, `result`, `timestamp`, `bundles`, `labels`; `metrics` only when the decision's timings are
 * known (they are not kept today, so the field is absent).
 */
import type { DecisionInputRow } from '@agw/shared';
import type { ExportedRecord } from '@agw/verifier';

/** The name of the tenant's effective bundle (GET /api/bundles/gateway/status). */
export const OPA_BUNDLE_NAME = 'gateway';
/** The package custom policies are written in (`data.agw.custom`). */
const CUSTOM_TEMPLATE = 'custom';

/** The fields of an exported record an event reads. */
type DecidedRecord = ExportedRecord & { action_id: string; decision: string; requires_human?: boolean; details?: Record<string, unknown> };

export interface OpaDecisionEvent {
  decision_id: string;
  path: string;
  input: Record<string, unknown>;
  result: Record<string, unknown>;
  timestamp: string;
  bundles: Record<string, { revision: string }>;
  labels: Record<string, string>;
  metrics?: Record<string, number>;
}

export interface OpaLogContext {
  tenantId: string;
  productVersion: string;
  /** the tenant's current policy: its template names the decision path of the decisions its revision made */
  current?: { template: string; revision: string | null };
}

/**
 * The decision path: `agw/<template>/decision` (the rule the policy service queries, `data.agw.<template>.decision`)
 * when the revision that decided is the tenant's current one, whose template is known; otherwise `agw`, the
 * root of every policy package (an earlier revision's template is not kept with the record).
 */
export function decisionPath(revision: string, ctx: OpaLogContext): string {
  const c = ctx.current;
  if (!c || !c.revision || c.revision !== revision) return 'agw';
  return `agw/${c.template === CUSTOM_TEMPLATE ? 'custom' : c.template}/decision`;
}

/** The policy input as the policy service built it (policy-evaluation.ts policyInput), from the stored replay input. */
export function opaInput(row: DecisionInputRow, record: DecidedRecord | undefined): Record<string, unknown> {
  const input: Record<string, unknown> = {
    agent_id: row.agent_id,
    agent_type: row.agent_type,
    agent_version: row.agent_version,
    tool: row.tool,
    method: row.method,
    // as stored: PII replaced by per-subject ciphertext envelopes (plaintext is never kept)
    params: row.stored_params,
    pii_detected: row.pii_detected,
    session_id: row.session_id ?? null,
  };
  const connection = record?.details?.upstream_connection as { mode?: string; user_id?: string | null } | undefined;
  if (connection?.mode) input.upstream = { connection: { mode: connection.mode, user_id: connection.user_id ?? null } };
  if (row.behavioral) input.behavioral = row.behavioral;
  return input;
}

/**
 * One event per policy decision among `records` (in record order). `inputs`: the replay inputs of their
 * actions. An action's policy decision is its first record with the input's decision (a queued action's
 * later records are a human's).
 */
export function opaDecisionEvents(records: readonly ExportedRecord[], inputs: readonly DecisionInputRow[], ctx: OpaLogContext): OpaDecisionEvent[] {
  const byAction = new Map(inputs.map((i) => [i.action_id, i]));
  const seen = new Set<string>();
  const out: OpaDecisionEvent[] = [];
  for (const r of records as readonly DecidedRecord[]) {
    const row = byAction.get(r.action_id);
    if (!row || seen.has(r.action_id) || r.decision !== row.decision) continue;
    seen.add(r.action_id);
    out.push({
      decision_id: row.action_id,
      path: decisionPath(row.bundle_revision, ctx),
      input: opaInput(row, r),
      result: {
        decision: row.decision,
        violations: row.violations,
        severity: row.severity,
        requires_human: r.requires_human ?? row.decision === 'requires_human',
        passes: row.passes,
      },
      timestamp: new Date(row.evaluated_at).toISOString(),
      bundles: { [OPA_BUNDLE_NAME]: { revision: row.bundle_revision } },
      labels: { app: 'agw', id: ctx.tenantId, version: ctx.productVersion },
    });
  }
  return out;
}

export const toOpaLines = (events: readonly OpaDecisionEvent[]) => events.map((e) => `${JSON.stringify(e)}\n`).join('');
