/**
 * Interrupting a session: by a person (POST /interrupt), on an anomaly above the tenant's threshold, or
 * when max_session_hours is over (both `auto_triggered`). Ends are final: an interrupt of a session that
 * already ended is a 409. The session is cut off first (its MCP server refuses governed calls once the
 * status is not active), then `user.interrupt` goes to the platform; a platform failure is recorded in
 * the audit record but does not undo the cut-off. Then the `control_plane` record and `session.interrupted`.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, type DecisionPublisher, type Logger, NotFoundError } from '@agw/shared';
import type { AgentPlatform } from '../platform/agent-platform';
import { type SessionRecorder, derivedActionId } from './session-recorder';
import type { SessionRepository, SessionRow } from './session.repository';

export interface InterruptResult {
  status: 'interrupted';
  session_id: string;
  reason: string;
  interrupted_at: string;
  auto_triggered: boolean;
  audit_action_id: string;
}

export class SessionInterrupter {
  constructor(
    private readonly repo: SessionRepository,
    private readonly platform: AgentPlatform,
    private readonly recorder: SessionRecorder,
    private readonly publisher: DecisionPublisher,
    private readonly logger: Logger,
    private readonly onInterrupted: (sessionId: string, autoTriggered: boolean) => void,
  ) {}

  async interrupt(tenantId: string, sessionId: string, reason: string, autoTriggered: boolean): Promise<InterruptResult> {
    const current = await this.repo.get(tenantId, sessionId);
    if (!current) throw new NotFoundError(`Managed session ${sessionId} not found`);
    if (current.status !== 'active') throw new ConflictError(`Session ${sessionId} is already ${current.status}; it cannot be interrupted`);
    const actionId = randomUUID();
    const ended = await this.repo.end(tenantId, sessionId, 'interrupted', { end_reason: autoTriggered ? 'auto-interrupt' : 'interrupted by a user', interrupt_reason: reason, auto_triggered: autoTriggered, interrupt_action_id: actionId });
    if (!ended) throw new ConflictError(`Session ${sessionId} already ended; it cannot be interrupted`);
    let platformResult = 'sent';
    if (ended.anthropic_session_id) {
      await this.platform.interrupt(ended.anthropic_session_id).catch((e) => {
        platformResult = `failed: ${(e as Error).message}`.slice(0, 300);
        this.logger.warn({ session_id: sessionId, reason: platformResult }, 'user.interrupt could not be sent; the session is cut off from governed tools all the same');
      });
    }
    const interruptedAt = (ended.interrupted_at ?? new Date()).toISOString();
    await this.recorder.control(ended, {
      actionId,
      tool: 'managed_session',
      method: 'interrupt',
      params: { reason, auto_triggered: autoTriggered },
      decision: 'deny',
      severity: autoTriggered ? 'high' : 'medium',
      violations: [autoTriggered ? 'session_auto_interrupted' : 'session_interrupted'],
      details: { stage: 'session_interrupted', anthropic_session_id: ended.anthropic_session_id, user_interrupt: platformResult },
      bundleRevision: ended.bundle_revision ?? 'managed',
    });
    await this.publisher.publishSession({
      kind: 'interrupted',
      tenant_id: tenantId,
      session_id: sessionId,
      agent_id: ended.agent_id,
      data: { audit_action_id: actionId, reason, auto_triggered: autoTriggered, interrupted_at: interruptedAt },
      occurred_at: interruptedAt,
    });
    this.onInterrupted(sessionId, autoTriggered);
    return { status: 'interrupted', session_id: sessionId, reason, interrupted_at: interruptedAt, auto_triggered: autoTriggered, audit_action_id: actionId };
  }

  /** An observed event scored above the tenant's threshold: `anomaly.detected`, then an auto-interrupt. */
  async onAnomaly(s: SessionRow, event: { id: string; tool: string }, score: number, signals: string[], threshold: number): Promise<void> {
    const reason = `Anomaly score ${score} above the threshold ${threshold} on ${event.tool}: ${signals.join(', ')}`;
    await this.publisher.publishSession({
      kind: 'anomaly_detected',
      tenant_id: s.tenant_id,
      session_id: s.id,
      agent_id: s.agent_id,
      data: { audit_action_id: derivedActionId(`${s.id}:${event.id}`), reason, anomaly_score: score, signals, threshold, tool: event.tool },
      occurred_at: new Date().toISOString(),
    });
    await this.interrupt(s.tenant_id, s.id, reason, true).catch((e) => this.logger.info({ session_id: s.id, reason: (e as Error).message }, 'auto-interrupt: the session had ended already'));
  }
}
