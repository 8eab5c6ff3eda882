/**
 * Human decisions on queued actions: pending -> approved (the action executes, brokered when a credential
 * is registered) or pending -> rejected (discarded). Deciding twice is a 409; each decision is appended to
 * the audit chain with source `control_plane`.
 */
import { ConflictError, NotFoundError } from '@agw/shared';
import type { DecisionRecorder } from '../pipeline/decision-recorder';
import type { ToolBroker } from '../pipeline/hooks';
import type { ApprovalRepository, ApprovalRow } from './approval.repository';

export interface ApprovalDecision {
  status: 'approved' | 'rejected';
  action_id: string;
  execution_mode?: 'agent_direct' | 'gateway_brokered';
  execution_result?: { status_code: number; body: unknown };
}

export class ApprovalQueue {
  constructor(
    private readonly approvals: ApprovalRepository,
    private readonly recorder: DecisionRecorder,
    private readonly broker: ToolBroker,
  ) {}

  pending(tenantId: string) {
    return this.approvals.listPending(tenantId);
  }

  history(tenantId: string) {
    return this.approvals.listDecided(tenantId);
  }

  async decide(tenantId: string, actionId: string, status: 'approved' | 'rejected', by: string, note: string | null): Promise<ApprovalDecision> {
    const row = await this.approvals.decide(tenantId, actionId, status, by, note);
    if (!row) {
      const existing = await this.approvals.get(tenantId, actionId);
      if (!existing) throw new NotFoundError('Pending action not found');
      throw new ConflictError(`Action ${actionId} is already ${existing.status}`);
    }
    let execution: ApprovalDecision['execution_result'];
    let executionMode: ApprovalDecision['execution_mode'];
    if (status === 'approved') {
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
        .catch((e: unknown) => ({ status_code: 502, body: { error: e instanceof Error ? e.message : 'execution failed' }, hsm_fetch_ms: 0, execution_ms: 0, credential_name: '' }));
      executionMode = brokered ? 'gateway_brokered' : 'agent_direct';
      if (brokered) {
        execution = { status_code: brokered.status_code, body: brokered.body };
        await this.approvals.setExecution(tenantId, actionId, { status_code: brokered.status_code, credential: brokered.credential_name });
      }
    }
    await this.recordDecision(tenantId, row, status, by, note, executionMode, execution?.status_code);
    return { status, action_id: actionId, ...(executionMode ? { execution_mode: executionMode } : {}), ...(execution ? { execution_result: execution } : {}) };
  }

  private async recordDecision(
    tenantId: string,
    row: ApprovalRow,
    status: 'approved' | 'rejected',
    by: string,
    note: string | null,
    executionMode: string | undefined,
    executionStatus: number | undefined,
  ): Promise<void> {
    await this.recorder.record(
      tenantId,
      {
        action_id: row.action_id,
        agent_id: row.agent_id,
        agent_type: row.agent_type,
        agent_version: row.agent_version,
        tool: row.tool,
        method: row.method,
        params: row.params,
        decision: status === 'approved' ? 'allow' : 'deny',
        violations: row.opa_result.violations,
        severity: row.opa_result.severity,
        alert_tier: null,
        requires_human: true,
        execution_mode: executionMode ?? null,
        source: 'control_plane',
        session_id: row.session_id,
        bundle_revision: 'human-approval',
        details: { approval: status, decided_by: by, note, ...(executionStatus !== undefined ? { execution_status_code: executionStatus } : {}) },
        requested_at: new Date().toISOString(),
      },
      status,
    );
  }
}
