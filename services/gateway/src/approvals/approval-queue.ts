/**
 * Human decisions on queued actions: pending -> approved (the action executes, brokered when a credential
 * is registered, else the agent's one retry of the same call is allowed; a managed session's platform
 * confirmation request is answered `allow` by the managed service and its call then runs once when the
 * platform sends it), pending -> rejected (discarded),
 * pending -> expired (nobody decided in time: approval-expiry.ts). Deciding twice, or after expiry, is a
 * 409; each decision is appended to the audit chain with source `control_plane` and carries the
 * ApprovalBinding (params hash, bundle revisions) of the exact call it decided.
 *
 * Four eyes (docs/auth.md, "Four-eyes approvals"): an action whose `required_approvers` is n > 1 is
 * approved only by n distinct signed-in members, none of them its initiator (the member whose session,
 * API key or OAuth grant made the call). Each approval is a vote (ApprovalRepository.vote: one per member,
 * counted in one transaction holding the action's row, so votes arriving on two replicas at once are each
 * counted once), recorded on its own (`details.approval` `vote`); the vote that meets the quorum approves
 * and executes the action, once, and its record names every approver. One rejection ends the action.
 */
import {
  type ApprovalBinding,
  type ApprovalRepository,
  type ApprovalRow,
  type ApprovalVote,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PLATFORM_CONFIRMATION,
  type PendingFilter,
  humanDecisionRecord,
} from '@agw/shared';
import type { DecisionRecorder } from '../pipeline/decision-recorder';
import type { BrokeredExecution, ToolBroker } from '../pipeline/hooks';

export interface ApprovalDecision {
  status: 'approved' | 'rejected';
  action_id: string;
  execution_mode?: 'agent_direct' | 'gateway_brokered';
  execution_result?: { status_code: number; body: unknown };
  approval_binding: ApprovalBinding;
}

/** A four-eyes approval that did not meet the quorum yet (HTTP 202). */
export interface QuorumPending {
  status: 'pending';
  action_id: string;
  /** the members who approved so far, oldest first */
  approvals: Approver[];
  required: number;
}

/** A member's approval as the API shows it. */
export interface Approver {
  member_id: string;
  email: string;
  approved_at: string;
}

export const approverOf = (v: ApprovalVote): Approver => ({ member_id: v.member_id, email: v.member_email, approved_at: v.voted_at.toISOString() });

/** Who decides: the records' name for the caller (deciderOf) and, for a signed-in member, the member. */
export interface Decider {
  name: string;
  /** a member's own console session (not one made from an API key): the only caller a four-eyes vote counts */
  member?: { id: string; email: string };
  /** how to name a caller that is no member, in a refusal ("an API key", …) */
  caller?: string;
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
  /**
   * A member's e-mail as an audit record may hold it: encrypted for its data subject (the PII rules,
   * docs/vault.md), so crypto-shredding the subject erases it from the chain. Without it (tests) the
   * records name the member by id only.
   */
  pseudonymise?: (tenantId: string, actionId: string, email: string) => Promise<unknown>;
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

  pending(tenantId: string, filter: PendingFilter = {}) {
    return this.approvals.listPending(tenantId, this.clock(), filter);
  }

  countPending(tenantId: string, filter: PendingFilter = {}) {
    return this.approvals.countPending(tenantId, this.clock(), filter);
  }

  history(tenantId: string) {
    return this.approvals.listDecided(tenantId);
  }

  get(tenantId: string, actionId: string) {
    return this.approvals.get(tenantId, actionId);
  }

  /** The members who started the action (four eyes: never its approvers). */
  initiators(tenantId: string, row: ApprovalRow) {
    return this.approvals.initiators(tenantId, row);
  }

  /** The approvals so far of these actions (four eyes). */
  votes(tenantId: string, actionIds: string[]) {
    return this.approvals.votes(tenantId, actionIds);
  }

  /**
   * `by`: who decides (a string for a caller that is no member). An approval of a four-eyes action
   * (`required_approvers` > 1) is a member's vote: `pending` until the quorum is met.
   */
  async decide(tenantId: string, actionId: string, status: 'approved' | 'rejected', by: string | Decider, note: string | null): Promise<ApprovalDecision | QuorumPending> {
    const decider: Decider = typeof by === 'string' ? { name: by } : by;
    const now = this.clock();
    const revision = await (this.o.currentRevision?.(tenantId) ?? Promise.resolve(UNKNOWN_REVISION)).catch(() => 'unavailable');
    const bind = (r: { params_sha256: string | null; bundle_revision: string | null }): ApprovalBinding => ({
      params_sha256: r.params_sha256 ?? UNKNOWN_REVISION,
      evaluated_bundle_revision: r.bundle_revision ?? UNKNOWN_REVISION,
      bundle_revision: revision,
    });
    if (status === 'approved') {
      const current = await this.approvals.get(tenantId, actionId);
      if (current?.status === 'pending' && current.required_approvers > 1) return this.vote(tenantId, current, decider, note, now, bind);
    }
    // the record names the member who decided (its e-mail pseudonymised), worked out before anything is decided
    const member = decider.member ? { id: decider.member.id, ...(this.o.pseudonymise ? { email: await this.o.pseudonymise(tenantId, actionId, decider.member.email) } : {}) } : undefined;
    const row = await this.approvals.decide(tenantId, actionId, status, decider.name, note, now, bind);
    if (!row) return this.notDecidable(tenantId, actionId, status, now);
    return this.complete(tenantId, row, status, decider.name, note, undefined, member);
  }

  /** Why a decision found nothing pending to decide: 404, or 409 naming the state (an action past its time is expired now). */
  private async notDecidable(tenantId: string, actionId: string, status: 'approved' | 'rejected', now: Date): Promise<never> {
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

  /** A four-eyes approval: the member's vote, counted once; the vote that meets the quorum approves and executes. */
  private async vote(
    tenantId: string,
    current: ApprovalRow,
    decider: Decider,
    note: string | null,
    now: Date,
    bind: (r: { params_sha256: string | null; bundle_revision: string | null }) => ApprovalBinding,
  ): Promise<ApprovalDecision | QuorumPending> {
    const actionId = current.action_id;
    const n = current.required_approvers;
    const member = decider.member;
    if (!member) {
      throw new ForbiddenError(
        `Action ${actionId} needs the approval of ${n} distinct members (four eyes): approve it signed in as a member of the tenant (a console session); ${decider.caller ?? 'this caller'} is no member and cannot count as an approver (it may reject)`,
      );
    }
    if ((await this.approvals.initiators(tenantId, current)).includes(member.id)) {
      throw new ForbiddenError(
        `${member.email} started action ${actionId} (its session, API key or OAuth grant made the call): the initiator of an action never counts as its approver (four eyes); ${n} other members must approve it`,
      );
    }
    // encrypted before the vote is stored: a vault that cannot do it leaves nothing half-done
    const email = this.o.pseudonymise ? await this.o.pseudonymise(tenantId, actionId, member.email) : undefined;
    const out = await this.approvals.vote(tenantId, actionId, member, note, now, bind);
    if (!out) return this.notDecidable(tenantId, actionId, 'approved', now);
    const approvals = out.votes.map(approverOf);
    if (out.kind === 'duplicate') {
      const mine = approvals.find((a) => a.member_id === member.id);
      throw new ConflictError(
        `${member.email} approved action ${actionId} already${mine ? ` (${mine.approved_at})` : ''}: a member's approval counts once; ${n - approvals.length} more from other members needed (${approvals.length} of ${n})`,
      );
    }
    await this.recorder.record(
      tenantId,
      humanDecisionRecord(out.row, {
        decision: 'requires_human',
        details: {
          approval: 'vote',
          member: { id: member.id, ...(email !== undefined ? { email } : {}) },
          note,
          approvals: approvals.length,
          required: n,
          quorum_met: out.kind === 'approved',
        },
        requested_at: now.toISOString(),
      }),
      'pending',
      { event: false },
    );
    if (out.kind === 'pending') return { status: 'pending', action_id: actionId, approvals, required: n };
    const approvers = await Promise.all(
      out.votes.map(async (v) => ({ id: v.member_id, ...(this.o.pseudonymise ? { email: v.member_id === member.id ? email : await this.o.pseudonymise(tenantId, actionId, v.member_email) } : {}) })),
    );
    // the record names the approvers by member id and pseudonymised e-mail (`approvers`), never in clear
    return this.complete(tenantId, out.row, 'approved', `members:${out.votes.map((v) => v.member_id).join(',')}`, note, { approvers, required: n });
  }

  /** A decided action: an approved one executed (unless the platform runs it), the decision recorded. */
  private async complete(
    tenantId: string,
    row: ApprovalRow,
    status: 'approved' | 'rejected',
    by: string,
    note: string | null,
    quorum?: { approvers: Array<{ id: string; email?: unknown }>; required: number },
    member?: { id: string; email?: unknown },
  ): Promise<ApprovalDecision> {
    const actionId = row.action_id;
    const binding = row.decision_binding as unknown as ApprovalBinding;
    let execution: ApprovalDecision['execution_result'];
    let executionMode: ApprovalDecision['execution_mode'];
    let definitionSha256: string | undefined;
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
          // a per_user upstream: the connection of the human the queued call acted for, never the approver's
          ...(row.acts_for_user_id ? { userId: row.acts_for_user_id } : {}),
        })
        .catch((e: unknown): BrokeredExecution => ({ status_code: 502, body: { error: e instanceof Error ? e.message : 'execution failed' }, hsm_fetch_ms: 0, execution_ms: 0, credential_name: '' }));
      executionMode = brokered ? 'gateway_brokered' : 'agent_direct';
      // a federated tool: the record names the pinned definition it ran with (the receipt's `definition`)
      if (brokered?.mcp_result) definitionSha256 = (await this.broker.federatedTarget?.(tenantId, row.tool, row.method).catch(() => undefined))?.definition_sha256;
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
    await this.recordDecision(tenantId, row, status, by, note, binding, executionMode, execution?.status_code, quorum, member, definitionSha256);
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
    quorum?: { approvers: Array<{ id: string; email?: unknown }>; required: number },
    member?: { id: string; email?: unknown },
    definitionSha256?: string,
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
          // four eyes: every member whose approval made the quorum
          ...(quorum ? { approvers: quorum.approvers, required_approvers: quorum.required } : {}),
          ...(member ? { member } : {}),
          ...(definitionSha256 ? { definition_sha256: definitionSha256 } : {}),
        },
        requested_at: (row.decided_at ?? this.clock()).toISOString(),
      }),
      status,
    );
  }
}
