/**
 * The governed tool call, in the spec's fixed order:
 *  1. rate limit (http/rate-limit.middleware.ts, before this runs)   2. gateway constraints, and a federated
 *     tool that is quarantined or unknown (docs/federation.md)
 *  3-5. policy pass 1, behavioral enrichment, pass 2 (one call to the policy service)
 *  6. decision   7. brokered execution   8. audit (committed before we answer)   9. event for webhooks.
 * Both entrances (POST /api/mcp/tools/call and the MCP server's tools/call) call `run`.
 */
import { randomUUID } from 'node:crypto';
import type { decision } from '@agw/proto';
import {
  traceHooks,
  type ActionFacts,
  type AppError,
  type ApprovalRepository,
  type ApprovalRow,
  type DecisionKind,
  DependencyUnavailableError,
  type GovernedDecision,
  type Logger,
  type PLATFORM_CONFIRMATION,
  type QueueReason,
  SESSION_APPROVAL_VIOLATION,
  approvalPatternFor,
  governedRecord,
  isDependencyDown,
  mayRequireApproval,
  paramsSha256,
  withPreviousJson,
} from '@agw/shared';
import type { ApprovedRetries } from '../approvals/approved-retry';
import type { PolicyClient } from '../clients/grpc-clients';
import type { GatewayMetrics } from '../metrics';
import { DEFAULT_FAILURE_CONFIG, type StoredSettings, approvalExpiryOf } from '../tenants/settings.schema';
import { type AnswerReceipt, type CallEvidence, answerReceipt, callEvidence } from './call-receipt';
import { type DecisionRecord, type DecisionRecorder, paramsJsonOf } from './decision-recorder';
import type { BrokeredExecution, FederatedTarget, GatewayConstraints, PiiGuard, ProtectedParams, ToolBroker, UpstreamRound } from './hooks';
import type { ToolCallRequest } from './tool-call.schema';
import { outcomeSpanAttributes, toolSpanAttributes } from './tool-span';

export type ToolCallOutcome =
  | {
      kind: 'allowed';
      action_id: string;
      execution_mode: 'agent_direct' | 'gateway_brokered';
      execution_result?: { status_code: number; body: unknown };
      /** a federated call: execution_result.body is the upstream's MCP CallToolResult (or {error}) */
      mcp_result?: boolean;
      latency?: { opa_eval_ms: number; hsm_fetch_ms: number; execution_ms: number; total_ms: number };
      violations: string[];
      severity: string;
      receipt?: AnswerReceipt;
    }
  | { kind: 'pending'; action_id: string; message: string; violations: string[]; severity: string; receipt?: AnswerReceipt }
  | {
      kind: 'denied';
      action_id: string;
      violations: string[];
      severity: string;
      alert_tier: string;
      /** why, where the refusal has a reason to give (a gateway constraint; a quarantined federated tool and how a human approves it) */
      message?: string;
      receipt?: AnswerReceipt;
    };

export interface CallContext {
  tenantId: string;
  settings: StoredSettings & Record<string, unknown>;
  sessionId?: string | null;
  /** a managed session's `require_human_approval` patterns: a matching call that the policy allows is queued */
  approvalPatterns?: readonly string[];
  /** filled with the duration (ms) of each step; the HTTP route returns them as a Server-Timing header */
  timings?: StepTimings;
  /** SHA-256 of the API key making the call (kept with a queued action: an agent key sees its own actions) */
  apiKeyHash?: string;
  /** the call comes with an agent-scoped key: a retry of an approved action must come from the key that queued it */
  agentKey?: boolean;
  /** the member whose console session makes the call: never an approver of it (docs/auth.md, "Four-eyes approvals") */
  initiatorUserId?: string;
  /** the call's arguments hash and, once recorded, its receipt (call-receipt.ts); `run` makes it */
  evidence?: CallEvidence;
  /** the human the agent acts for (a per_user upstream uses their connection; docs/federation.md) */
  actsFor?: string;
  /** a live MCP tools/call: its cancellation and a relayed upstream round (hooks.ts UpstreamRound) */
  upstreamRound?: UpstreamRound;
}

export type StepTimings = Record<string, number>;

/** Run `fn`, adding its duration in ms to `timings[name]`. */
export async function timed<T>(timings: StepTimings | undefined, name: string, fn: () => Promise<T>): Promise<T> {
  if (!timings) return fn();
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    timings[name] = (timings[name] ?? 0) + (performance.now() - t0);
  }
}

export interface PipelineDeps {
  policy: PolicyClient;
  recorder: DecisionRecorder;
  approvals: ApprovalRepository;
  /** the agent's retry of an approved agent_direct action (approvals/approved-retry.ts) */
  approvedRetries?: Pick<ApprovedRetries, 'claim'>;
  constraints: GatewayConstraints;
  pii: PiiGuard;
  broker: ToolBroker;
  metrics: GatewayMetrics;
  logger: Logger;
  /** the member who issued an API key (a per_user upstream acts for them), or undefined */
  keyOwner?(tenantId: string, keyHash: string): Promise<string | undefined>;
}

/** What every record of one governed call shares, whatever is decided (the records: `governedRecord`). */
type CallFacts = ActionFacts & { requested_at: string };

/** What a queued call's record says besides its facts (the approval queue keeps the same). */
type QueuedOutcome = Pick<GovernedDecision, 'params' | 'violations' | 'severity' | 'bundle_revision'>;

/** The violation ids the failure modes record (docs/policy.md). */
export const FAILURE_VIOLATIONS = {
  closed: 'policy_engine_unavailable',
  open: 'policy_engine_unavailable_fail_open',
  queue: 'policy_engine_unavailable_queued',
} as const;


/** A queued call's details name the policy's number of approvers when it asks for four eyes. */
const requiredApprovers = (details: Record<string, unknown>, n: number | undefined) => (n && n > 1 ? { ...details, required_approvers: n } : details);

const round = (ms: number) => Math.round(ms * 1000) / 1000;

export class ToolCallPipeline {
  constructor(private readonly d: PipelineDeps) {}

  /**
   * The call governed, its outcome with the receipt of the record it committed (when one was signed). With
   * tracing on, in a span of the OpenTelemetry GenAI conventions for tool execution (`execute_tool <tool>`,
   * docs/evidence.md "Traces"): the tool, the agent, the action id as the tool call id, and once recorded the
   * record id and the receipt's leaf hash, so a trace leads to its proof.
   */
  async run(ctx: CallContext, call: ToolCallRequest): Promise<ToolCallOutcome> {
    const tracing = traceHooks.current;
    if (!tracing) return this.governed(ctx, call);
    return tracing.span(`execute_tool ${call.tool}`, toolSpanAttributes(call), async (annotate) => {
      const outcome = await this.governed(ctx, call);
      annotate(outcomeSpanAttributes(outcome));
      return outcome;
    });
  }

  private async governed(ctx: CallContext, call: ToolCallRequest): Promise<ToolCallOutcome> {
    const evidence = callEvidence(call.params);
    const outcome = await this.decideCall({ ...ctx, evidence }, call);
    const receipt = answerReceipt(evidence);
    return receipt ? { ...outcome, receipt } : outcome;
  }

  private async decideCall(ctx: CallContext, call: ToolCallRequest): Promise<ToolCallOutcome> {
    const started = performance.now();
    const { tenantId } = ctx;
    if (call.approved_action_id && this.d.approvedRetries) {
      // the exact approved call comes back: allowed once without a new evaluation; anything else is a new call
      const retried = await this.d.approvedRetries.claim({ ...ctx, agentKeyHash: ctx.agentKey ? ctx.apiKeyHash : undefined }, call, call.approved_action_id);
      if (retried) return retried;
    }
    const base: CallFacts = {
      action_id: randomUUID(),
      agent_id: call.agent_id,
      agent_type: call.agent_type,
      agent_version: call.agent_version,
      tool: call.tool,
      method: call.method,
      session_id: ctx.sessionId ?? null,
      requested_at: new Date().toISOString(),
    };
    const actionId = base.action_id;

    // Started now, awaited only for an allowed call: does the tool have a credential (brokered execution)?
    // undefined when the broker cannot tell quickly; then `execute` decides.
    const credentialCheck = this.d.broker.hasCredential?.(tenantId, call.tool).catch(() => undefined);
    // ... and is it a federated upstream's tool (then the vault executes it; a quarantined one is refused)?
    const federatedCheck = this.d.broker.federatedTarget?.(tenantId, call.tool, call.method).catch(() => undefined);

    // PII is found and encrypted first: the policy sees pii_detected, the stores only ever see ciphertext.
    const protectedParams = await timed(ctx.timings, 'pii', () => this.d.pii.protect(tenantId, actionId, call.params));
    const stored = protectedParams.storedParams;

    // 2. gateway constraints
    const hit = await timed(ctx.timings, 'constraints', () => this.d.constraints.check(tenantId, call, ctx.settings));
    if (hit) {
      const record = governedRecord(base, { params: stored, decision: 'deny', violations: [hit.violation], severity: hit.severity, alert_tier: 'escalate', bundle_revision: 'gateway-constraints', details: { stage: 'gateway_constraints', message: hit.message } });
      await this.decide(ctx, call, record, 'denied', 'constraints');
      return { kind: 'denied', action_id: actionId, violations: [hit.violation], severity: hit.severity, alert_tier: 'escalate', message: hit.message };
    }
    const federated = await federatedCheck;
    // a per_user upstream called with an API key: the key's owner is the human it acts for, if it has one
    if (federated?.connection === 'per_user' && !ctx.actsFor && ctx.apiKeyHash && !ctx.apiKeyHash.startsWith('oauth-grant:') && this.d.keyOwner) {
      ctx = { ...ctx, actsFor: await this.d.keyOwner(tenantId, ctx.apiKeyHash).catch(() => undefined) };
    }
    if (federated?.upstream && !federated.executable && federated.violation) {
      // a tool the gateway cannot run (it needs task-augmented execution) is no attack: low; a pin or scan refusal is high
      const severity = federated.violation === 'task_execution_required' ? 'low' : 'high';
      const record = governedRecord(base, { params: stored, decision: 'deny', violations: [federated.violation], severity, alert_tier: 'escalate', bundle_revision: 'federation-pin', details: { stage: 'federation', message: federated.message ?? '' } });
      await this.decide(ctx, call, record, 'denied', 'federation');
      return { kind: 'denied', action_id: actionId, violations: [federated.violation], severity, alert_tier: 'escalate', ...(federated.message ? { message: federated.message } : {}) };
    }

    // a managed session's call that a human approved on the platform's confirmation request: the exact call
    // (same session, tool, method, params hash) runs once, bound to that approval; anything else goes on
    if (ctx.sessionId && ctx.approvalPatterns?.length && mayRequireApproval(ctx.approvalPatterns, federated?.upstream ? { name: `${call.tool}__${call.method}`, upstream: call.tool, method: call.method } : { name: call.tool })) {
      const confirmed = await this.d.approvals.claimConfirmed(tenantId, ctx.sessionId, { tool: call.tool, method: call.method, params_sha256: paramsSha256(call.params) }, new Date());
      if (confirmed) return this.runConfirmed(ctx, call, base, confirmed, (await credentialCheck) === false && !federated?.upstream, started);
    }

    // 3-5. policy (pass 1, enrichment, pass 2 inside the policy service)
    const t0 = performance.now();
    let evaluation;
    try {
      evaluation = await this.evaluate(ctx, call, actionId, protectedParams, connectionOf(ctx, federated));
    } catch (e) {
      if (!isDependencyDown(e)) throw e;
      return this.onPolicyUnavailable(ctx, call, base, stored, e as AppError);
    }
    const opaEvalMs = performance.now() - t0;

    const { violations, decision_facts: decisionFacts } = evaluation;
    const severity = evaluation.severity || 'none';
    const alertTier = evaluation.alert_tier || null;
    const common = { params: stored, violations, severity, bundle_revision: evaluation.bundle_revision };
    const connection = connectionOf(ctx, federated);
    const details = {
      stage: 'policy',
      passes: evaluation.passes,
      pii_detected: protectedParams.piiDetected,
      pii_subjects: protectedParams.subjectIds,
      ...(connection ? { upstream_connection: connection } : {}),
      // a federated tool: the definition that was pinned when the call was decided (the receipt names it)
      ...(federated?.upstream && federated.definition_sha256 ? { definition_sha256: federated.definition_sha256 } : {}),
    };

    // 6. decision
    if (evaluation.decision === 'deny') {
      // The audit record keeps the policy's tier (P1/P2/P3); the denial body says `escalate` (spec).
      const record = governedRecord(base, { ...common, decision: 'deny', alert_tier: alertTier ?? 'escalate', requires_human: evaluation.requires_human, details });
      await this.decide(ctx, call, record, 'denied', 'policy', decisionFacts);
      return { kind: 'denied', action_id: actionId, violations, severity, alert_tier: 'escalate' };
    }
    if (evaluation.decision === 'requires_human') {
      await this.queue(ctx, call, base, common, requiredApprovers(details, evaluation.required_approvers), 'policy', alertTier, decisionFacts, evaluation.required_approvers);
      return { kind: 'pending', action_id: actionId, message: pendingMessage(actionId), violations, severity };
    }
    const pattern = approvalPatternFor(ctx.approvalPatterns, call.tool, call.method, federated?.upstream ? `${call.tool}__${call.method}` : undefined);
    if (pattern) {
      const escalated = [...violations, SESSION_APPROVAL_VIOLATION];
      await this.queue(ctx, call, base, { ...common, violations: escalated }, { ...details, require_human_approval: pattern }, 'session_config', alertTier, decisionFacts);
      return { kind: 'pending', action_id: actionId, message: pendingMessage(actionId), violations: escalated, severity };
    }

    // 7. brokered execution
    const brokered = await timed(ctx.timings, 'broker', async () =>
      (await credentialCheck) === false && !federated?.upstream ? null : this.d.broker.execute(tenantId, actionId, { ...call, storedParams: stored, origin: 'tool_call', ...(ctx.actsFor ? { userId: ctx.actsFor } : {}), ...(ctx.upstreamRound ? { upstreamRound: ctx.upstreamRound } : {}) }),
    );
    const record = governedRecord(base, {
      ...common,
      decision: 'allow',
      alert_tier: alertTier,
      requires_human: evaluation.requires_human,
      execution_mode: brokered ? 'gateway_brokered' : 'agent_direct',
      details: brokered ? { ...details, execution: executionDetails(brokered) } : details,
    });
    await this.decide(ctx, call, record, 'allowed', 'policy', decisionFacts);
    return allowedOutcome(actionId, brokered, violations, severity, opaEvalMs, started);
  }

  /**
   * The platform's call after a human approved its confirmation request (docs/managed.md): no new policy
   * evaluation (the human decided on this exact call's evaluation), executed as an allowed call, recorded
   * under the queued action's id with the approval it used. Once executed it stays claimed even if the
   * record fails (the call ran; it must not run twice).
   */
  private async runConfirmed(ctx: CallContext, call: ToolCallRequest, base: CallFacts, row: ApprovalRow, noCredential: boolean, started: number): Promise<ToolCallOutcome> {
    const { violations, severity } = row.opa_result;
    const brokered = await timed(ctx.timings, 'broker', async () => (noCredential ? null : this.d.broker.execute(ctx.tenantId, row.action_id, { ...call, storedParams: row.params, origin: 'approval', ...(ctx.actsFor ? { userId: ctx.actsFor } : {}) })));
    const details = {
      stage: 'approved_confirmation',
      approved_action_id: row.action_id,
      decided_by: row.decided_by,
      platform_tool_use_id: row.platform_tool_use_id,
      approval_binding: row.decision_binding,
      ...(brokered ? { execution: executionDetails(brokered) } : {}),
    };
    const record = governedRecord(
      { ...base, action_id: row.action_id },
      {
        params: row.params,
        decision: 'allow',
        violations,
        severity,
        requires_human: true,
        execution_mode: brokered ? 'gateway_brokered' : 'agent_direct',
        bundle_revision: row.bundle_revision ?? 'human-approval',
        details,
      },
    );
    await this.decide(ctx, call, record, 'allowed', 'approved_confirmation');
    return allowedOutcome(row.action_id, brokered, violations, severity, 0, started);
  }

  /** Steps 3-5 in the policy service; what the record lacks for the replay input comes back to be committed with it. */
  private async evaluate(ctx: CallContext, call: ToolCallRequest, actionId: string, p: Pick<ProtectedParams, 'piiDetected'>, connection?: { mode: string; user_id: string | null }) {
    const evaluation = await timed(ctx.timings, 'policy', () =>
      this.d.policy.evaluateStream({
        tenant_id: ctx.tenantId,
        action_id: actionId,
        call: {
          agent_id: call.agent_id,
          agent_type: call.agent_type,
          agent_version: call.agent_version,
          tool: call.tool,
          method: call.method,
          ...withPreviousJson('params', paramsJsonOf(call.params)),
          pii_detected: p.piiDetected,
          session_id: ctx.sessionId ?? '',
          upstream_connection: connection?.mode ?? '',
          upstream_user_id: connection?.user_id ?? '',
        },
      }),
    );
    this.d.metrics.policyEvalMs.observe(evaluation.eval_ms);
    return evaluation;
  }

  /** A decision taken: its record committed (steps 8-9), the constraint counters, the metric. */
  private async decide(ctx: CallContext, call: ToolCallRequest, record: DecisionRecord, kind: DecisionKind, stage: string, decisionFacts?: decision.DecisionFacts): Promise<void> {
    await this.d.recorder.record(ctx.tenantId, record, kind, { timings: ctx.timings, decisionFacts, evidence: ctx.evidence });
    await this.d.constraints.record(ctx.tenantId, call, { decision: record.decision, violations: record.violations }).catch(() => undefined);
    this.d.metrics.decisions.inc({ decision: record.decision, stage });
  }

  private async queue(
    ctx: CallContext,
    call: ToolCallRequest,
    facts: CallFacts,
    outcome: QueuedOutcome,
    details: Record<string, unknown>,
    /** every reason but platform_confirmation, which the managed service's confirmations queue */
    reason: Exclude<QueueReason, typeof PLATFORM_CONFIRMATION>,
    alertTier: string | null,
    decisionFacts?: decision.DecisionFacts,
    /** the policy's number of distinct approvers (four eyes); the tenant's setting applies when stricter */
    requiredApprovers = 0,
  ): Promise<void> {
    // The queue row first, then the record: a queue write that fails (Postgres unreachable) leaves no record
    // behind a 5xx answer; a record that cannot be appended takes the queue row back.
    await this.d.approvals.enqueue(ctx.tenantId, {
      action_id: facts.action_id,
      agent_id: call.agent_id,
      agent_type: call.agent_type,
      agent_version: call.agent_version,
      tool: call.tool,
      method: call.method,
      params: outcome.params,
      opa_result: { requires_human: true, violations: outcome.violations, severity: outcome.severity },
      queue_reason: reason,
      queued_at: new Date(facts.requested_at),
      session_id: facts.session_id,
      // what binds a decision to this exact call, and when it expires (approvals/*, docs/auth.md)
      params_sha256: paramsSha256(call.params),
      bundle_revision: outcome.bundle_revision,
      requested_by_key: ctx.apiKeyHash ?? null,
      initiator_user_id: ctx.initiatorUserId ?? null,
      // a per_user upstream's call approved later runs with the connection of the human it acted for
      acts_for_user_id: ctx.actsFor ?? null,
      ...(requiredApprovers > 1 ? { required_approvers: requiredApprovers } : {}),
      expires_at: approvalExpiryOf(ctx.settings, new Date(facts.requested_at)),
    });
    try {
      await this.d.recorder.record(
        ctx.tenantId,
        governedRecord(facts, { ...outcome, decision: 'requires_human', alert_tier: alertTier, details: { ...details, queue_reason: reason } }),
        'pending',
        { timings: ctx.timings, decisionFacts, evidence: ctx.evidence },
      );
    } catch (e) {
      await this.d.approvals.withdraw(ctx.tenantId, facts.action_id).catch(() => undefined);
      throw e;
    }
    await this.d.constraints.record(ctx.tenantId, call, { decision: 'requires_human', violations: outcome.violations }).catch(() => undefined);
    this.d.metrics.decisions.inc({ decision: 'requires_human', stage: reason });
  }

  /** The tenant's failure mode decides when the policy engine cannot answer. */
  private async onPolicyUnavailable(
    ctx: CallContext,
    call: ToolCallRequest,
    base: CallFacts,
    stored: Record<string, unknown>,
    cause: AppError,
  ): Promise<ToolCallOutcome> {
    const mode = ctx.settings.failure_config?.mode ?? DEFAULT_FAILURE_CONFIG.mode;
    this.d.metrics.policyUnavailable.inc({ mode });
    this.d.logger.warn({ tenantId: ctx.tenantId, mode, cause: cause.message, action_id: base.action_id }, 'policy engine unreachable: failure mode applied');
    const details = { stage: 'failure_mode', failure_mode: mode, cause: cause.message };
    const bundle = 'unavailable';
    if (mode === 'fail-open') {
      const violations = [FAILURE_VIOLATIONS.open];
      await this.d.recorder.record(ctx.tenantId, governedRecord(base, { params: stored, decision: 'allow', violations, severity: 'low', execution_mode: 'agent_direct', bundle_revision: bundle, details }), 'allowed', { timings: ctx.timings, evidence: ctx.evidence });
      this.d.metrics.decisions.inc({ decision: 'allow', stage: 'fail_open' });
      return { kind: 'allowed', action_id: base.action_id, execution_mode: 'agent_direct', violations, severity: 'low' };
    }
    if (mode === 'fail_to_queue') {
      const violations = [FAILURE_VIOLATIONS.queue];
      await this.queue(ctx, call, base, { params: stored, violations, severity: 'none', bundle_revision: bundle }, details, 'fail_to_queue', null);
      return { kind: 'pending', action_id: base.action_id, message: pendingMessage(base.action_id), violations, severity: 'none' };
    }
    // fail-closed: nothing is allowed; the refusal is still audited when the audit service can take it.
    await this.d.recorder
      .record(
        ctx.tenantId,
        governedRecord(base, { params: stored, decision: 'deny', violations: [FAILURE_VIOLATIONS.closed], severity: 'high', alert_tier: 'escalate', bundle_revision: bundle, details }),
        'denied',
        { timings: ctx.timings, evidence: ctx.evidence },
      )
      .catch((e) => this.d.logger.error({ err: e }, 'could not audit a fail-closed refusal'));
    this.d.metrics.decisions.inc({ decision: 'deny', stage: 'fail_closed' });
    throw new DependencyUnavailableError(`Policy engine unreachable: the request was refused (fail-closed). action_id=${base.action_id}`, { cause });
  }
}

/** An allowed call's outcome: executed by the agent, or by the gateway with its answer and where the time went. */
function allowedOutcome(actionId: string, brokered: BrokeredExecution | null, violations: string[], severity: string, opaEvalMs: number, started: number): ToolCallOutcome {
  if (!brokered) return { kind: 'allowed', action_id: actionId, execution_mode: 'agent_direct', violations, severity };
  return {
    kind: 'allowed',
    action_id: actionId,
    execution_mode: 'gateway_brokered',
    execution_result: { status_code: brokered.status_code, body: brokered.body },
    ...(brokered.mcp_result ? { mcp_result: true } : {}),
    latency: {
      opa_eval_ms: round(opaEvalMs),
      hsm_fetch_ms: round(brokered.hsm_fetch_ms),
      execution_ms: round(brokered.execution_ms),
      total_ms: round(performance.now() - started),
    },
    violations,
    severity,
  };
}

/**
 * The connection a call of an upstream that needs OAuth uses (docs/federation.md): the tenant's (shared),
 * or the one of the human the agent acts for (per_user; null when it acts for none). The policy sees it
 * as input.upstream.connection and the audit record names the human.
 */
function connectionOf(ctx: CallContext, federated: FederatedTarget | undefined): { mode: 'shared' | 'per_user'; user_id: string | null } | undefined {
  if (!federated?.upstream || !federated.connection) return undefined;
  return { mode: federated.connection, user_id: federated.connection === 'per_user' ? (ctx.actsFor ?? null) : null };
}

/** What the audit record keeps of an execution: status, credential, and for a federated call its outcome. */
export function executionDetails(b: BrokeredExecution): Record<string, unknown> {
  const body = b.body as { isError?: unknown } | null;
  return {
    status_code: b.status_code,
    credential: b.credential_name,
    ...(b.mcp_result ? { outcome: b.outcome ?? 'executed', is_error: body?.isError === true } : {}),
  };
}

export function pendingMessage(actionId: string): string {
  return `Action ${actionId} requires human approval and is queued; it will not run until approved.`;
}
