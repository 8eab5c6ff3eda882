/**
 * How platform events move a managed session (pure). The platform's session statuses are idle, running,
 * rescheduling and terminated; a session that finishes its work goes idle, it is not terminated.
 *
 * | platform event                                   | managed session            |
 * |--------------------------------------------------|----------------------------|
 * | session.status_running / _rescheduled            | stays active               |
 * | session.status_idle, stop_reason end_turn         | completed                  |
 * | session.status_idle, stop_reason requires_action  | stays active (waits)       |
 * | session.status_idle, retries_exhausted / refusal / budget_reached | failed     |
 * | session.status_terminated, session.deleted       | failed (ended by the platform) |
 * | session.error                                    | stays active (logged); a following terminated ends it |
 * An interrupted session stays interrupted whatever the platform says afterwards (ends are final, see
 * SessionRepository.end).
 */
import type { PlatformEvent } from '../platform/agent-platform';

export type SessionTransition = { to: 'completed' | 'failed'; reason: string } | null;

export function transitionFor(e: PlatformEvent): SessionTransition {
  if (e.type === 'session.status_idle') {
    const stop = e.stop_reason?.type ?? 'end_turn';
    if (stop === 'end_turn') return { to: 'completed', reason: 'platform: idle after end_turn' };
    if (stop === 'requires_action') return null;
    return { to: 'failed', reason: `platform: idle after ${stop}` };
  }
  if (e.type === 'session.status_terminated') return { to: 'failed', reason: 'platform: session terminated' };
  if (e.type === 'session.deleted') return { to: 'failed', reason: 'platform: session deleted' };
  return null;
}

/** Built-in tool use that the consumer logs as an observed record. */
export const isObservedToolUse = (e: PlatformEvent) => e.type === 'agent.tool_use';
