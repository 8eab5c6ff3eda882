/**
 * One governed call through the tenant's policy: pass 1 without behavioral data; only when the policy
 * reads input.behavioral and pass 1 did not already deny, enrich from the behavioral store and run pass 2.
 * Every decision updates the agent's counters and anomaly score and is kept (with stored params, never
 * plaintext PII) for replay.
 */
import { InputError } from '@agw/shared';
import { type Behavioral, type BehaviorStore, countsAsViolation } from '../behavior/behavior-store';
import type { PolicyOutcome } from '../engine/decision';
import type { ActiveBundle, TenantPolicies } from '../bundles/tenant-policies';
import { postgres } from '../stores/store-errors';
import type { DecisionRepository, StoredDecision } from './decision.repository';

export interface ToolCallFacts {
  agentId: string;
  agentType: string;
  agentVersion: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  piiDetected: boolean;
  sessionId: string;
}

export interface EvaluationResult extends PolicyOutcome {
  bundleRevision: string;
  evalMs: number;
  passes: 1 | 2;
  behavioral: Behavioral | null;
  /** with `deferReplay`: the replay input, for the caller to commit with the audit record (not written here) */
  replay?: ReplayRow;
}

/** The replay input of one decision (a policy_decisions row without the tenant). */
export type ReplayRow = Omit<StoredDecision, 'tenant_id'>;

/** The policy input (spec: "Policy input and output"); behavioral only in pass 2. */
export function policyInput(c: ToolCallFacts, behavioral?: Behavioral | Record<string, unknown> | null): Record<string, unknown> {
  const input: Record<string, unknown> = {
    agent_id: c.agentId,
    agent_type: c.agentType,
    agent_version: c.agentVersion,
    tool: c.tool,
    method: c.method,
    params: c.params,
    pii_detected: c.piiDetected,
    session_id: c.sessionId || null,
  };
  if (behavioral) input.behavioral = behavioral;
  return input;
}

/** Two passes on one bundle (shared by live evaluation and replay). */
export async function twoPass(
  bundle: ActiveBundle,
  call: ToolCallFacts,
  nowNs: bigint,
  enrich: () => Promise<Behavioral | Record<string, unknown> | null>,
): Promise<{ outcome: PolicyOutcome; passes: 1 | 2; behavioral: Behavioral | Record<string, unknown> | null }> {
  const pass1 = bundle.evaluate(policyInput(call), nowNs);
  if (pass1.decision === 'deny' || !bundle.readsBehavioral) return { outcome: pass1, passes: 1, behavioral: null };
  const behavioral = await enrich();
  if (!behavioral) return { outcome: pass1, passes: 1, behavioral: null };
  return { outcome: bundle.evaluate(policyInput(call, behavioral), nowNs), passes: 2, behavioral };
}

export function amountOf(params: Record<string, unknown>): number | null {
  const a = params.amount;
  if (typeof a === 'number' && Number.isFinite(a)) return a;
  if (typeof a === 'string' && a.trim() !== '' && Number.isFinite(Number(a))) return Number(a);
  return null;
}

export class PolicyEvaluation {
  constructor(
    private readonly policies: TenantPolicies,
    private readonly behavior: BehaviorStore,
    private readonly decisions: DecisionRepository,
    private readonly onEval: (ms: number, passes: number) => void = () => undefined,
  ) {}

  /**
   * `deferReplay`: the replay input is returned (`replay`) instead of written, so the caller commits it in
   * the audit record's transaction (the gateway does: one durable commit per governed call).
   */
  async evaluate(tenantId: string, actionId: string, call: ToolCallFacts, storedParams: Record<string, unknown>, opts: { deferReplay?: boolean } = {}): Promise<EvaluationResult> {
    if (!tenantId) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
    if (!actionId) throw InputError.at(['action_id'], 'action_id is required', 'missing');
    const bundle = await this.policies.active(tenantId);
    const nowMs = Date.now();
    const nowNs = BigInt(nowMs) * 1_000_000n;
    const t0 = performance.now();
    const { outcome, passes, behavioral } = await twoPass(bundle, call, nowNs, () => this.behavior.snapshot(tenantId, call.agentId, call.tool, call.sessionId, nowMs));
    const evalMs = performance.now() - t0;
    this.onEval(evalMs, passes);
    // counters and anomaly score move on every decision; the snapshot at decision time is kept for replay
    const recorded = this.behavior.record(
      tenantId,
      call.agentId,
      { actionId, tool: call.tool, sessionId: call.sessionId, amount: amountOf(call.params), violation: countsAsViolation(outcome.findings) },
      nowMs,
    );
    // the replay input needs the counters only when pass 2 did not read them; otherwise both writes run at once
    const atDecision = behavioral ? null : await recorded;
    const replay: ReplayRow = {
      action_id: actionId,
      agent_id: call.agentId,
      agent_type: call.agentType,
      agent_version: call.agentVersion,
      tool: call.tool,
      method: call.method,
      session_id: call.sessionId || null,
      stored_params: storedParams,
      pii_detected: call.piiDetected,
      behavioral: (behavioral ?? atDecision) as unknown as Record<string, unknown>,
      decision: outcome.decision,
      violations: outcome.violations,
      severity: outcome.severity,
      bundle_revision: bundle.revision,
      passes,
      evaluated_at: new Date(nowMs),
    };
    const result: EvaluationResult = { ...outcome, bundleRevision: bundle.revision, evalMs, passes, behavioral: (behavioral as Behavioral | null) ?? null };
    if (opts.deferReplay) {
      await recorded;
      return { ...result, replay };
    }
    await Promise.all([recorded, postgres(() => this.decisions.insert(tenantId, replay))]);
    return result;
  }
}
