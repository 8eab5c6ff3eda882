/**
 * A valid decision event for tests and benches (no service calls it): an allowed governed call of
 * `tenantId` without a session, as the gateway publishes it, with `over` on top. Typed as the contract's
 * DecisionEvent, so a field added to the event is added here once, not in each test's copy.
 */
import { randomUUID } from 'node:crypto';
import type { DecisionEvent } from './events';

export function sampleDecisionEvent(tenantId: string, over: Partial<DecisionEvent> = {}): DecisionEvent {
  return {
    event_id: randomUUID(),
    kind: 'allowed',
    tenant_id: tenantId,
    action_id: randomUUID(),
    agent_id: 'agent-1',
    agent_type: 'assistant',
    tool: 'svc_web_search',
    method: 'search',
    decision: 'allow',
    violations: [],
    severity: 'none',
    alert_tier: null,
    requires_human: false,
    source: 'mcp_governed',
    session_id: null,
    record_id: 1,
    record_hash: 'f'.repeat(64),
    requested_at: new Date().toISOString(),
    ...over,
  };
}
