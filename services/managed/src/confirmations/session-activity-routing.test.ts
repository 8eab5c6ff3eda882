/** A session's decision events by kind: every one is activity, only a human's answer or an expiry is delivered. */
import { routeSessionActivity } from './session-activity-routing';

function routed() {
  const calls: string[] = [];
  const route = routeSessionActivity({
    activity: (tenantId, sessionId) => void calls.push(`activity ${tenantId} ${sessionId}`),
    deliver: (tenantId, actionId) => void calls.push(`deliver ${tenantId} ${actionId}`),
  });
  return { calls, route };
}

it.each(['approved', 'rejected', 'expired'])('a %s decision is activity of the session and delivers the answer of its action', (kind) => {
  const { calls, route } = routed();
  route({ tenant_id: 't1', session_id: 's1', action_id: 'a1', kind: kind as never });
  expect(calls).toEqual(['activity t1 s1', 'deliver t1 a1']);
});

it.each(['allowed', 'denied', 'pending', 'observed', 'quarantined', 'policy'])('a %s decision is activity only', (kind) => {
  const { calls, route } = routed();
  route({ tenant_id: 't1', session_id: 's1', action_id: 'a1', kind: kind as never });
  expect(calls).toEqual(['activity t1 s1']);
});
