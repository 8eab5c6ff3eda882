/**
 * What a session-bound decision event means to the managed-session service, decided by its kind: every
 * decision of a session is activity (its event consumer's idle clock restarts, a consumer stopped idle is
 * attached again), and a human's answer to a platform confirmation request (`approved`, `rejected`) or its
 * expiry (`expired`) is delivered to the agent platform now instead of at the next sweep.
 */
import type { DecisionEvent } from '@agw/shared';

/** The decision kinds that end a confirmation request: its answer goes to the platform. */
export const CONFIRMATION_ANSWERS: ReadonlySet<string> = new Set(['approved', 'rejected', 'expired']);

export interface SessionActivityTargets {
  /** the session's consumer: activity of the session */
  activity(tenantId: string, sessionId: string): Promise<void> | void;
  /** the confirmation of this action: deliver its answer (ToolConfirmations.deliver) */
  deliver(tenantId: string, actionId: string): Promise<void> | void;
}

/** The handler of one session-bound decision event (the NATS subscriber calls it; nothing is awaited). */
export function routeSessionActivity(to: SessionActivityTargets): (e: Pick<DecisionEvent, 'tenant_id' | 'kind' | 'action_id'> & { session_id: string }) => void {
  return (e) => {
    void to.activity(e.tenant_id, e.session_id);
    if (CONFIRMATION_ANSWERS.has(e.kind)) void to.deliver(e.tenant_id, e.action_id);
  };
}
