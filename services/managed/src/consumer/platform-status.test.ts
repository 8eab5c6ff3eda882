import { isObservedToolUse, transitionFor } from './platform-status';

const ev = (type: string, extra: Record<string, unknown> = {}) => ({ id: 'sevt_1', type, ...extra });

describe('platform status → session status', () => {
  it.each([
    [ev('session.status_idle', { stop_reason: { type: 'end_turn' } }), 'completed'],
    [ev('session.status_idle', { stop_reason: { type: 'retries_exhausted' } }), 'failed'],
    [ev('session.status_idle', { stop_reason: { type: 'refusal' } }), 'failed'],
    [ev('session.status_idle', { stop_reason: { type: 'budget_reached' } }), 'failed'],
    [ev('session.status_terminated'), 'failed'],
    [ev('session.deleted'), 'failed'],
  ])('%j ends the session as %s', (e, to) => {
    expect(transitionFor(e)?.to).toBe(to);
  });

  it.each([ev('session.status_idle', { stop_reason: { type: 'requires_action', event_ids: [] } }), ev('session.status_running'), ev('session.status_rescheduled'), ev('session.error', { error: { type: 'unknown_error' } }), ev('agent.tool_use')])(
    '%j keeps it active',
    (e) => {
      expect(transitionFor(e)).toBeNull();
    },
  );

  it('observes built-in tool use only (MCP tool use is governed by the gateway itself)', () => {
    expect(isObservedToolUse(ev('agent.tool_use'))).toBe(true);
    expect(isObservedToolUse(ev('agent.mcp_tool_use'))).toBe(false);
  });
});
