/**
 * The managed service's session-activity subscription against the real NATS: a session-bound decision is
 * seen whether its tenant has a webhook (`decisions.…session`) or not (`nohook.decisions.…session`); a
 * decision without a session is not.
 */
import { randomUUID } from 'node:crypto';
import { type Bus, type DecisionEvent, closeTestBus, createLogger, openTestBus, sampleDecisionEvent, subjects } from '@agw/shared';
import { subscribeSessionActivity } from '../src/nats/session-activity.subscriber';

const prefix = `SA${randomUUID().replace(/-/g, '').slice(0, 10)}`;
let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus(prefix, 'session-activity-test');
});
afterAll(() => closeTestBus(bus));

const event = (sessionId: string | null) => sampleDecisionEvent('t1', { session_id: sessionId });

test('session-bound decisions of tenants with and without a webhook both count as activity', async () => {
  const seen: string[] = [];
  const sub = subscribeSessionActivity(bus, (e) => seen.push(e.session_id), createLogger('test', 'silent'));
  await bus.nc.flush();
  const publish = (e: DecisionEvent, webhook: boolean) => bus.js.publish(subjects.decision(prefix, e.tenant_id, e.kind, e.session_id, webhook), new TextEncoder().encode(JSON.stringify(e)), { msgID: e.event_id });
  await publish(event('hooked-session'), true);
  await publish(event('quiet-session'), false);
  await publish(event(null), true);
  await publish(event(null), false);
  const until = Date.now() + 5000;
  while (seen.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  expect(seen.sort()).toEqual(['hooked-session', 'quiet-session']);
  sub.stop();
});
