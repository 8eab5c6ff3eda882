/**
 * One governed call through the tenant's policy: pass 1 without behavioral data; only when the policy
 * reads input.behavioral and pass 1 did not already deny, enrich from the behavioral store and run pass 2.
 * Every decision updates the agent's counters and anomaly score, and answers what its audit record lacks
 * for the replay input (agw.decision.v1.DecisionFacts: the verdict, the behavioral data, the passes, the
 * time) for the caller to commit with the record, which holds the call and its stored params; this service
 * writes no decision table (the audit service owns it).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { decision } from '@agw/proto';
import { InputError, behavioralMessage } from '@agw/shared';
import { type Behavioral, type BehaviorStore, countsAsViolation } from '../behavior/behavior-store';
import type { PolicyOutcome } from '../engine/decision';
import type { PolicyBundle } from '../bundles/policy-bundle';
import type { TenantPolicies } from '../bundles/tenant-policies';

export interface ToolCallFacts {
  agentId: string;
  agentType: string;
  agentVersion: string;
  tool: string;
  method: string;
  params: Record<string, unknown>;
  piiDetected: boolean;
  sessionId: string;
  /** an upstream that needs OAuth: shared | per_user, and the human whose connection it uses (docs/federation.md) */
  upstreamConnection?: string;
  upstreamUserId?: string;
}

export interface EvaluationResult extends PolicyOutcome {
  bundleRevision: string;
  evalMs: number;
  passes: 1 | 2;
  behavioral: Behavioral | null;
  /** what the record lacks for the replay input, for the caller to commit with it (AppendRequest.decision_facts) */
  facts: decision.DecisionFacts;
}

/** The call's facts from its message (the one conversion: live evaluation and replay). */
export function toolCallFacts(m: decision.ToolCall, params: Record<string, unknown>): ToolCallFacts {
  return {
    agentId: m.agent_id,
    agentType: m.agent_type,
    agentVersion: m.agent_version,
    tool: m.tool,
    method: m.method,
    params,
    piiDetected: m.pii_detected,
    sessionId: m.session_id,
    ...(m.upstream_connection ? { upstreamConnection: m.upstream_connection, upstreamUserId: m.upstream_user_id } : {}),
  };
}

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
  // a call of an upstream that needs OAuth: whose connection it uses (docs/federation.md, "Upstreams that need OAuth")
  if (c.upstreamConnection) input.upstream = { connection: { mode: c.upstreamConnection, user_id: c.upstreamUserId || null } };
  if (behavioral) input.behavioral = behavioral;
  return input;
}

/** Two passes on one bundle (shared by live evaluation and replay). */
export async function twoPass(
  bundle: PolicyBundle,
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
    private readonly onEval: (ms: number, passes: number) => void = () => undefined,
    /** a decision's violation count that failed after the answer (no answer waits for it): logged and counted */
    private readonly onRecordFailed: (e: unknown) => void = () => undefined,
    /** the tenant's shadow (PolicyShadows.offer): told of each decision, it queues it for the candidate and returns */
    private readonly shadow?: { offer(tenantId: string, actionId: string, call: ToolCallFacts, live: { decision: string; violations: string[]; bundleRevision: string; evalMs: number }, behavioral: Record<string, unknown> | null, nowNs: bigint): void },
  ) {}

  async evaluate(tenantId: string, actionId: string, call: ToolCallFacts): Promise<EvaluationResult> {
    if (!tenantId) throw InputError.at(['tenant_id'], 'tenant_id is required', 'missing');
    if (!actionId) throw InputError.at(['action_id'], 'action_id is required', 'missing');
    const bundle = await this.policies.active(tenantId);
    const nowMs = Date.now();
    const nowNs = BigInt(nowMs) * 1_000_000n;
    const facts = { actionId, tool: call.tool, sessionId: call.sessionId, amount: amountOf(call.params) };
    // Every decision records the call; the record also answers what pass 2 sees (recordForPass2: the call
    // counted as one without a violation, violations and score before it), and those are the counters at
    // decision time the replay input keeps whichever pass decided. So the record goes out first and pass 1
    // is evaluated while Redis answers: one Redis call per governed call, its round trip overlapped with
    // pass 1 instead of after it. The script is written when ioredis flushes its auto-pipeline (a
    // setImmediate), so pass 1 waits for that turn of the event loop. A decision that carries a violation
    // adds it afterwards (countViolation), off the answer's path, on the same connection as the agent's
    // next call's script, so that script reads it.
    const recording = this.behavior.recordForPass2(tenantId, call.agentId, facts, nowMs);
    recording.catch(() => undefined); // awaited below; a pass 1 that throws first must not leave it unhandled
    await nextTurn();
    const t0 = performance.now();
    const { outcome, passes } = await twoPass(bundle, call, nowNs, async () => (await recording).behavioral);
    const evalMs = performance.now() - t0;
    this.onEval(evalMs, passes);
    // a record that failed fails the call (as Redis down does), whichever pass decided
    const recorded = await recording;
    if (countsAsViolation(outcome.findings)) this.behavior.countViolation(tenantId, call.agentId, recorded.newTool, nowMs).catch((e) => this.onRecordFailed(e));
    const atDecision = recorded.behavioral;
    const decided: decision.DecisionFacts = {
      decision: outcome.decision,
      violations: outcome.violations,
      severity: outcome.severity,
      pii_detected: call.piiDetected,
      behavioral: behavioralMessage(atDecision),
      passes,
      evaluated_at: new Date(nowMs).toISOString(),
    };
    // a running shadow decides the same call under its candidate later, off this answer's path
    this.shadow?.offer(tenantId, actionId, call, { decision: outcome.decision, violations: outcome.violations, bundleRevision: bundle.revision, evalMs }, atDecision as unknown as Record<string, unknown> | null, nowNs);
    return { ...outcome, bundleRevision: bundle.revision, evalMs, passes, behavioral: passes === 2 ? atDecision : null, facts: decided };
  }
}
