/**
 * Human decisions on queued actions: pending -> approved (the action executes, brokered when a credential
 * is registered, else the agent's one retry of the same call is allowed; a managed session's platform
 * confirmation request is answered `allow` by the managed service and its call then runs once when the
 * platform sends it), pending -> rejected (discarded),
 * pending -> expired (nobody decided in time: approval-expiry.ts). Deciding twice, or after expiry, is a
 * 409; each decision is appended to the audit chain with source `control_plane` and carries the
 * ApprovalBinding (params hash, bundle revisions) of the exact call it decided.
 */
import { type ApprovalBinding, type ApprovalRepository, type ApprovalRow, ConflictError, NotFoundError, PLATFORM_CONFIRMATION, humanDecisionRecord } from '@agw/shared';
import type { DecisionRecorder } from '../pipeline/decision-recorder';
import type { BrokeredExecution, ToolBroker } from '../pipeline/hooks';

export interface ApprovalDecision {
  status: 'approved' | 'rejected';
  action_id: string;
  execution_mode?: 'agent_direct' | 'gateway_brokered';
  execution_result?: { status_code: number; body: unknown };
  approval_binding: ApprovalBinding;
}

/** The time source of approvals and expiry; tests pass an explicit one. */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();

/** What a bundle revision is recorded as when the action predates the binding or the policy cannot tell. */
export const UNKNOWN_REVISION = 'unknown';

export interface ApprovalQueueOptions {
  clock?: Clock;
  /** the tenant's policy bundle revision in force now ('unavailable' when the policy service cannot say) */
  currentRevision?: (tenantId: string) => Promise<string>;
  /** expires this action if it is due (approval-expiry.ts); called when a decision finds it past its time */
  expireNow?: (tenantId: string, actionId: string) => Promise<void>;
}

export class ApprovalQueue {
  private readonly clock: Clock;
  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly recorder: DecisionRecorder,
    private readonly broker: ToolBroker,
    private readonly o: ApprovalQueueOptions = {},
  ) {
    this.clock = o.clock ?? systemClock;
  }

  pending(tenantId: string) {
    return this.approvals.listPending(tenantId, this.clock());
  }

  history(tenantId: string) {
    return this.approvals.listDecided(tenantId);
  }

  get(tenantId: string, actionId: string) {
    return this.approvals.get(tenantId, actionId);
  }

  async decide(tenantId: string, actionId: string, status: 'approved' | 'rejected', by: string, note: string | null): Promise<ApprovalDecision> {
    const now = this.clock();
    const revision = await (this.o.currentRevision?.(tenantId) ?? Promise.resolve(UNKNOWN_REVISION)).catch(() => 'unavailable');
    const row = await this.approvals.decide(tenantId, actionId, status, by, note, now, (r) => ({
      params_sha256: r.params_sha256 ?? UNKNOWN_REVISION,
      evaluated_bundle_revision: r.bundle_revision ?? UNKNOWN_REVISION,
      bundle_revision: revision,
    }));
    if (!row) {
      let existing = await this.approvals.get(tenantId, actionId);
      if (!existing) throw new NotFoundError('Pending action not found');
      if (existing.status === 'pending' && existing.expires_at && existing.expires_at <= now) {
        // past its time but not swept yet: expire it now (recorded, event), then answer as for an expired one
        await this.o.expireNow?.(tenantId, actionId);
        existing = (await this.approvals.get(tenantId, actionId)) ?? existing;
      }
      if (existing.status === 'expired' || (existing.status === 'pending' && existing.expires_at && existing.expires_at <= now)) {
        throw new ConflictError(`Action ${actionId} expired at ${(existing.expires_at ?? now).toISOString()} without a decision; it can no longer be ${status}. The agent must submit the call again.`);
      }
      throw new ConflictError(`Action ${actionId} is already ${existing.status}`);
    }
    const binding = row.decision_binding as unknown as ApprovalBinding;
    let execution: ApprovalDecision['execution_result'];
    let executionMode: ApprovalDecision['execution_mode'];
    // a managed session's platform confirmation request: the platform runs the call itself once it hears
    // `allow` (the managed service tells it), through the session's MCP server (ToolCallPipeline binds it)
    if (status === 'approved' && row.queue_reason !== PLATFORM_CONFIRMATION) {
      const brokered = await this.broker
        .execute(tenantId, actionId, {
          agent_id: row.agent_id,
          agent_type: row.agent_type,
          agent_version: row.agent_version,
          tool: row.tool,
          method: row.method,
          params: row.params,
          storedParams: row.params,
          origin: 'approval',
        })
        .catch((e: unknown): BrokeredExecution => ({ status_code: 502, body: { error: e instanceof Error ? e.message : 'execution failed' }, hsm_fetch_ms: 0, execution_ms: 0, credential_name: '' }));
      executionMode = brokered ? 'gateway_brokered' : 'agent_direct';
      if (brokered) {
        execution = { status_code: brokered.status_code, body: brokered.body };
        // a federated call's answer is kept for the agent (GET /api/actions/{id}): it cannot retry to get it
        await this.approvals.setExecution(tenantId, actionId, {
          status_code: brokered.status_code,
          credential: brokered.credential_name,
          ...(brokered.mcp_result ? { outcome: brokered.outcome ?? 'executed', result: brokered.body } : {}),
        });
      }
    }
    await this.recordDecision(tenantId, row, status, by, note, binding, executionMode, execution?.status_code);
    return {
      status,
      action_id: actionId,
      ...(executionMode ? { execution_mode: executionMode } : {}),
      ...(execution ? { execution_result: execution } : {}),
      approval_binding: binding,
    };
  }

  private async recordDecision(
    tenantId: string,
    row: ApprovalRow,
    status: 'approved' | 'rejected',
    by: string,
    note: string | null,
    binding: ApprovalBinding,
    executionMode: string | undefined,
    executionStatus: number | undefined,
  ): Promise<void> {
    await this.recorder.record(
      tenantId,
      humanDecisionRecord(row, {
        decision: status === 'approved' ? 'allow' : 'deny',
        execution_mode: executionMode ?? null,
        details: {
          approval: status,
          decided_by: by,
          note,
          approval_binding: binding,
          ...(executionStatus !== undefined ? { execution_status_code: executionStatus } : {}),
        },
        requested_at: (row.decided_at ?? this.clock()).toISOString(),
      }),
      status,
    );
  }
}
