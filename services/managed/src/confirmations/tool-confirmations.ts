/**
 * Platform-native approvals of managed sessions (docs/managed.md, "Tools that ask a human"). A tool of the
 * session that a `require_human_approval` pattern may match is `always_ask` on the platform, so the
 * platform stops before calling it and raises a confirmation request (`agent.mcp_tool_use` with
 * `evaluated_permission: 'ask'`, then `session.status_idle` / `requires_action`). For each request:
 *
 * 1. the call is evaluated by the tenant's policy, as the gateway would evaluate it (personal data in the
 *    arguments encrypted per subject first);
 * 2. a policy deny is answered `deny` at once, its violations as the message, and recorded as the governed
 *    call's denial: it never reaches a human;
 * 3. a call the policy escalates, or that a pattern matches, is queued in the tenant's approval queue
 *    (queue_reason `platform_confirmation`, with the session, the tool and its arguments, the platform's
 *    tool-use id and the policy's evaluation) and recorded as pending, which fires `action.pending`;
 * 4. any other call (a `tool.method` pattern marked the tool, but this method matches none) is answered
 *    `allow` at once and is governed as usual when it arrives at the gateway's MCP server.
 *
 * A human decision (approved / rejected in the console or the API) or the expiry is then delivered as the
 * `user.tool_confirmation` (`allow`, or `deny` with the reviewer's note or the expiry as the message) and
 * recorded as a `control_plane` record of the same action (method `tool_confirmation`). Delivery happens
 * at once when the decision's event arrives over NATS, and a sweep every few seconds delivers whatever that
 * missed: nothing is lost when a replica or the platform is down for a while.
 */
import { mayContainPii } from '@agw/pii';
import { type ApprovalRepository, DEFAULT_APPROVAL_EXPIRY_SECONDS, type Logger, PLATFORM_CONFIRMATION, SESSION_APPROVAL_VIOLATION, approvalPatternFor, jsonField, jsonOf, objectFromAnswerJson, paramsSha256 } from '@agw/shared';
import type { AgentConfigs } from '../agents/agent-configs';
import type { PolicyClient, VaultClient } from '../clients';
import type { AgentPlatform, PlatformEvent } from '../platform/agent-platform';
import type { SessionRecorder } from '../sessions/session-recorder';
import { derivedActionId } from '../sessions/session-recorder';
import type { SessionRepository, SessionRow } from '../sessions/session.repository';
import type { Answer, ConfirmationRepository, ConfirmationRow } from './confirmation.repository';
import { governedCallOf } from './governed-call';


/** Is this platform event a confirmation request (a tool use the platform holds for a human)? */
export const isConfirmationRequest = (e: PlatformEvent): boolean => e.type === 'agent.mcp_tool_use' && e.evaluated_permission === 'ask';

export interface ToolConfirmationDeps {
  confirmations: ConfirmationRepository;
  approvals: ApprovalRepository;
  sessions: SessionRepository;
  configs: AgentConfigs;
  platform: AgentPlatform;
  policy: PolicyClient;
  vault: VaultClient;
  recorder: SessionRecorder;
  /** the tenant's approval_expiry_seconds, when it set one */
  approvalExpirySeconds(tenantId: string): Promise<number | undefined>;
  /** an answer reached the platform: the session runs again (its event consumer should be there) */
  onDelivered?(s: SessionRow): void;
  logger: Logger;
}

/** The answer a decided approval gives the platform; undefined while it is pending. */
export function answerOf(a: { status: string; note: string | null; decided_by: string | null } | undefined): Answer | undefined {
  if (!a || a.status === 'pending') return undefined;
  if (a.status === 'approved') return { result: 'allow', reason: 'approved', message: null };
  if (a.status === 'rejected') return { result: 'deny', reason: 'rejected', message: a.note ? `Rejected by a reviewer: ${a.note}` : 'Rejected by a reviewer.' };
  return { result: 'deny', reason: 'expired', message: 'Nobody approved this call in time: the approval expired. Do not retry it.' };
}

const status4xx = (e: unknown) => {
  const s = (e as { cause?: { status?: number } }).cause?.status;
  return typeof s === 'number' && s >= 400 && s < 500 && s !== 408 && s !== 429;
};

export class ToolConfirmations {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(private readonly d: ToolConfirmationDeps) {}

  /** Handle one confirmation request of the session's stream (idempotent: a request seen again is only delivered). */
  async request(s: SessionRow, e: PlatformEvent): Promise<void> {
    const known = await this.d.confirmations.find(s.tenant_id, s.id, e.id);
    if (known) return this.deliver(s.tenant_id, known.action_id);
    const name = String(e.name ?? '');
    const input = (e.input ?? {}) as Record<string, unknown>;
    const call = governedCallOf(name, input);
    const actionId = derivedActionId(`${s.id}:confirmation:${e.id}`);
    const config = await this.d.configs.get(s.tenant_id, s.agent_id);
    const requestedAt = new Date();

    // personal data is encrypted per subject before the policy, the queue or the chain see the params
    let stored = call.params;
    let piiDetected = false;
    if (mayContainPii(call.params)) {
      const p = await this.d.vault.protectParams({ tenant_id: s.tenant_id, action_id: actionId, ...jsonField('params', call.params) });
      stored = objectFromAnswerJson(jsonOf(p, 'stored_params'), 'stored_params');
      piiDetected = p.pii_detected;
    }
    const ev = await this.d.policy.evaluate({
      tenant_id: s.tenant_id,
      action_id: actionId,
      call: { agent_id: s.agent_id, agent_type: 'managed', agent_version: '1.0.0', tool: call.tool, method: call.method, ...jsonField('params', call.params), pii_detected: piiDetected, session_id: s.id },
    });
    const pattern = approvalPatternFor(config.require_human_approval, call.tool, call.method, call.federatedName);
    const fact = {
      actionId,
      tool: call.tool,
      method: call.method,
      params: stored,
      severity: ev.severity || 'none',
      alertTier: ev.alert_tier || null,
      bundleRevision: ev.bundle_revision,
      decisionFacts: ev.decision_facts,
      requestedAt,
    };
    const request = { action_id: actionId, session_id: s.id, tool_use_id: e.id, tool_name: name };
    const details = { stage: 'platform_confirmation', platform_tool_use_id: e.id, mcp_tool: name, passes: ev.passes, pii_detected: piiDetected };

    if (ev.decision === 'deny') {
      const message = `Denied by the tenant's policy (${ev.violations.join(', ') || 'no violation named'}). Do not retry this call.`;
      if (await this.d.confirmations.insert(s.tenant_id, { ...request, result: 'deny', reason: 'policy_deny', message })) {
        await this.d.recorder.governed(s, { ...fact, decision: 'deny', violations: ev.violations, alertTier: fact.alertTier ?? 'escalate', details, eventKind: 'denied' });
      }
      return this.deliver(s.tenant_id, actionId);
    }
    if (ev.decision !== 'requires_human' && !pattern) {
      await this.d.confirmations.insert(s.tenant_id, { ...request, result: 'allow', reason: 'not_escalated', message: null });
      return this.deliver(s.tenant_id, actionId);
    }

    const violations = pattern ? [...ev.violations, SESSION_APPROVAL_VIOLATION] : ev.violations;
    const expiry = (await this.d.approvalExpirySeconds(s.tenant_id)) ?? DEFAULT_APPROVAL_EXPIRY_SECONDS;
    // the queue row and the request first, then the record; a record that cannot be appended takes both back
    await this.d.approvals.enqueue(s.tenant_id, {
      action_id: actionId,
      agent_id: s.agent_id,
      agent_type: 'managed',
      agent_version: '1.0.0',
      tool: call.tool,
      method: call.method,
      params: stored,
      opa_result: { requires_human: true, violations, severity: fact.severity },
      queue_reason: PLATFORM_CONFIRMATION,
      queued_at: requestedAt,
      session_id: s.id,
      params_sha256: paramsSha256(call.params),
      bundle_revision: ev.bundle_revision,
      requested_by_key: null,
      expires_at: new Date(requestedAt.getTime() + expiry * 1000),
      platform_tool_use_id: e.id,
    });
    try {
      await this.d.confirmations.insert(s.tenant_id, request);
      await this.d.recorder.governed(s, {
        ...fact,
        decision: 'requires_human',
        violations,
        details: { ...details, queue_reason: PLATFORM_CONFIRMATION, ...(pattern ? { require_human_approval: pattern } : {}) },
        eventKind: 'pending',
      });
    } catch (err) {
      await this.d.confirmations.remove(s.tenant_id, actionId).catch(() => undefined);
      await this.d.approvals.withdraw(s.tenant_id, actionId).catch(() => undefined);
      throw err;
    }
    this.d.logger.info({ tenant_id: s.tenant_id, session_id: s.id, action_id: actionId, tool: name }, 'platform confirmation request queued for a human');
  }

  /**
   * Send the answer of a request, once it has one (its own, or the decided approval's): the platform gets
   * `user.tool_confirmation`, the chain a `control_plane` record. A platform that refuses it for good (the
   * session is gone) makes it undeliverable; an unreachable one leaves it for the next sweep.
   */
  async deliver(tenantId: string, actionId: string): Promise<void> {
    const row = await this.d.confirmations.claimDelivery(tenantId, actionId);
    if (!row) return;
    let answer: Answer | undefined;
    try {
      answer = row.result ? { result: row.result, reason: row.reason ?? '', message: row.message } : answerOf(await this.d.approvals.get(tenantId, actionId));
      if (!answer) return void (await this.d.confirmations.releaseDelivery(tenantId, actionId));
      const s = await this.d.sessions.get(tenantId, row.session_id);
      if (!s?.anthropic_session_id) return void (await this.d.confirmations.finish(tenantId, actionId, 'undeliverable', answer));
      try {
        await this.d.platform.confirmToolUse(s.anthropic_session_id, { toolUseId: row.tool_use_id, result: answer.result, ...(answer.message ? { denyMessage: answer.message } : {}) });
      } catch (e) {
        if (!status4xx(e)) throw e;
        this.d.logger.warn({ tenant_id: tenantId, action_id: actionId, reason: (e as Error).message }, 'the platform refused a tool confirmation: the session no longer waits for it');
        await this.d.confirmations.finish(tenantId, actionId, 'undeliverable', answer);
        return;
      }
      await this.d.confirmations.finish(tenantId, actionId, 'sent', answer);
      await this.record(s, row, answer);
      this.d.onDelivered?.(s);
    } catch (e) {
      await this.d.confirmations.releaseDelivery(tenantId, actionId).catch(() => undefined);
      this.d.logger.warn({ tenant_id: tenantId, action_id: actionId, reason: (e as Error).message }, 'tool confirmation not delivered yet: retried by the next sweep');
    }
  }

  /** Deliver every awaiting request that has an answer by now (decisions whose NATS event was missed). */
  async sweep(): Promise<void> {
    for (const row of await this.d.confirmations.deliverable()) await this.deliver(row.tenant_id, row.action_id);
  }

  start(everyMs: number): void {
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .catch((e) => this.d.logger.warn({ reason: (e as Error).message }, 'tool confirmation sweep failed'))
        .finally(() => (this.sweeping = undefined));
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }

  private async record(s: SessionRow, row: ConfirmationRow, answer: Answer): Promise<void> {
    await this.d.recorder.control(s, {
      actionId: row.action_id,
      tool: 'managed_session',
      method: 'tool_confirmation',
      params: { platform_tool_use_id: row.tool_use_id, mcp_tool: row.tool_name, result: answer.result },
      decision: answer.result,
      severity: 'none',
      violations: [],
      details: { stage: 'tool_confirmation', confirmation: answer.result, reason: answer.reason, message: answer.message, platform_tool_use_id: row.tool_use_id },
      bundleRevision: 'platform-confirmation',
      appendKey: `confirmation:${row.action_id}`,
    });
  }
}
