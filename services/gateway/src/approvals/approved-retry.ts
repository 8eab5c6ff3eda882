/**
 * The agent's retry of an approved action it executes itself (agent_direct: no credential was registered,
 * so approving could not run it). The agent sends the same call again with `approved_action_id`; it is
 * allowed without a new policy evaluation only when it is the exact call that was approved: same tool,
 * method and agent, the same params (RFC 8785 SHA-256, `paramsSha256`), once, and, for an agent-scoped key,
 * from the key that queued it. Anything else is an ordinary new call, evaluated from scratch (it may be
 * queued again): an approval is never stretched to cover different params.
 */
import { type ApprovalBinding, type ApprovalRepository, type Logger, governedRecord, paramsSha256 } from '@agw/shared';
import type { CallEvidence } from '../pipeline/call-receipt';
import type { DecisionRecorder } from '../pipeline/decision-recorder';
import type { ToolCallRequest } from '../pipeline/tool-call.schema';
import { type Clock, systemClock } from './approval-queue';

export interface RetryContext {
  tenantId: string;
  sessionId?: string | null;
  /** SHA-256 of the API key that sends the retry, when it is an agent-scoped key */
  agentKeyHash?: string;
  timings?: Record<string, number>;
  /** the retry's arguments hash; its receipt is kept in it (pipeline/call-receipt.ts) */
  evidence?: CallEvidence;
}

export interface AllowedRetry {
  kind: 'allowed';
  action_id: string;
  execution_mode: 'agent_direct';
  violations: string[];
  severity: string;
}

export class ApprovedRetries {
  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly recorder: DecisionRecorder,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The allowed outcome when `call` is the approved call of `approvedActionId`, else null (evaluate it anew). */
  async claim(ctx: RetryContext, call: ToolCallRequest, approvedActionId: string): Promise<AllowedRetry | null> {
    const now = this.clock();
    const hash = paramsSha256(call.params);
    const row = await this.approvals.claimRetry(ctx.tenantId, approvedActionId, { tool: call.tool, method: call.method, agent_id: call.agent_id, params_sha256: hash }, ctx.agentKeyHash, now);
    if (!row) return null;
    const binding = row.decision_binding as unknown as ApprovalBinding | null;
    try {
      await this.recorder.record(
        ctx.tenantId,
        governedRecord(
          { action_id: row.action_id, agent_id: row.agent_id, agent_type: call.agent_type, agent_version: call.agent_version, tool: row.tool, method: row.method, session_id: ctx.sessionId ?? row.session_id, requested_at: now.toISOString() },
          {
            // the stored params (PII as ciphertext envelopes), which the hash showed to be the ones sent
            params: row.params,
            decision: 'allow',
            violations: row.opa_result.violations,
            severity: row.opa_result.severity,
            requires_human: true,
            execution_mode: 'agent_direct',
            bundle_revision: row.bundle_revision ?? 'human-approval',
            details: { stage: 'approved_retry', approved_action_id: row.action_id, decided_by: row.decided_by, approval_binding: binding ?? { params_sha256: hash } },
          },
        ),
        'allowed',
        { timings: ctx.timings, evidence: ctx.evidence },
      );
    } catch (e) {
      // not recorded: the retry did not happen, so the agent may send it again
      await this.approvals.releaseRetry(ctx.tenantId, row.action_id).catch((err: unknown) => this.logger.error({ err, action_id: row.action_id }, 'could not release an unrecorded retry'));
      throw e;
    }
    return { kind: 'allowed', action_id: row.action_id, execution_mode: 'agent_direct', violations: row.opa_result.violations, severity: row.opa_result.severity };
  }
}
