import type { DecisionEvent } from '@agw/shared';
import { payloadFromDecision, payloadFromSession, testPayload, webhookEventFor, webhookEventForSession } from './webhook-event';

const decision: DecisionEvent = {
  event_id: 'e1',
  kind: 'denied',
  tenant_id: 't1',
  action_id: 'a1',
  agent_id: 'agent-1',
  agent_type: 'assistant',
  tool: 'svc_payments',
  method: 'transfer',
  decision: 'deny',
  violations: ['high_value_transaction_unapproved'],
  severity: 'high',
  alert_tier: 'escalate',
  requires_human: false,
  source: 'mcp_governed',
  session_id: null,
  record_id: 7,
  record_hash: 'abc',
  requested_at: '2026-11-21T10:00:00.000Z',
};

describe('webhook events', () => {
  it('maps decision kinds to the spec events for subscribed tenants', () => {
    expect(webhookEventFor('allowed', ['action.allowed'])).toBe('action.allowed');
    expect(webhookEventFor('denied', ['action.allowed'])).toBeNull();
    expect(webhookEventFor('denied', undefined)).toBe('action.denied');
    expect(webhookEventFor('pending', undefined)).toBe('action.pending');
    expect(webhookEventFor('observed', undefined)).toBeNull();
    expect(webhookEventFor('approved', ['action.allowed', 'action.denied', 'action.pending'])).toBeNull();
    expect(webhookEventFor('allowed', [])).toBeNull();
  });

  it('delivers expired queued actions as action.expired to tenants that subscribed to it (not a default)', () => {
    expect(webhookEventFor('expired', ['action.expired'])).toBe('action.expired');
    expect(webhookEventFor('expired', undefined)).toBeNull();
    expect(webhookEventFor('expired', ['action.pending', 'action.pending_approval'])).toBeNull();
  });

  it('delivers pending actions under the alias action.pending_approval when that is what the tenant chose', () => {
    expect(webhookEventFor('pending', ['action.pending_approval'])).toBe('action.pending_approval');
    expect(webhookEventFor('pending', ['action.pending'])).toBe('action.pending');
    expect(webhookEventFor('pending', ['action.pending_approval', 'action.pending'])).toBe('action.pending');
  });

  it('builds exactly the spec payload', () => {
    const p = payloadFromDecision('action.denied', decision);
    expect(p).toEqual({
      event: 'action.denied',
      timestamp: '2026-11-21T10:00:00.000Z',
      data: {
        action_id: 'a1',
        agent_id: 'agent-1',
        tool: 'svc_payments',
        method: 'transfer',
        decision: 'deny',
        violations: ['high_value_transaction_unapproved'],
        severity: 'high',
        requires_human: false,
      },
    });
  });

  it('test payloads have the same shape', () => {
    const p = testPayload('action.pending_approval');
    expect(Object.keys(p.data).sort()).toEqual(['action_id', 'agent_id', 'decision', 'method', 'requires_human', 'severity', 'tool', 'violations']);
    expect(p).toMatchObject({ event: 'action.pending_approval', data: { requires_human: true, agent_id: 'webhook-test' } });
  });

  it('maps an interrupted session to session.interrupted for tenants that subscribed to it', () => {
    expect(webhookEventForSession('interrupted', ['session.interrupted'])).toBe('session.interrupted');
    expect(webhookEventForSession('interrupted', undefined)).toBeNull();
    expect(webhookEventForSession('completed', ['session.interrupted'])).toBeNull();
    const p = payloadFromSession('session.interrupted', {
      event_id: 'e2',
      kind: 'interrupted',
      tenant_id: 't1',
      session_id: 's1',
      agent_id: 'agent-1',
      data: { audit_action_id: 'a9', reason: 'operator stop', anything_else: 'not sent' },
      occurred_at: '2026-11-21T11:00:00.000Z',
    });
    expect(p).toEqual({ event: 'session.interrupted', timestamp: '2026-11-21T11:00:00.000Z', data: { session_id: 's1', agent_id: 'agent-1', action_id: 'a9', reason: 'operator stop' } });
  });

  it('maps a detected anomaly to anomaly.detected with its score, signals, threshold and tool', () => {
    expect(webhookEventForSession('anomaly_detected', ['anomaly.detected'])).toBe('anomaly.detected');
    expect(webhookEventForSession('anomaly_detected', undefined)).toBeNull();
    const p = payloadFromSession('anomaly.detected', {
      event_id: 'e3',
      kind: 'anomaly_detected',
      tenant_id: 't1',
      session_id: 's1',
      agent_id: 'agent-1',
      data: { audit_action_id: 'a10', reason: 'dangerous shell', anomaly_score: 0.95, signals: ['recursive_delete_root'], threshold: 0.8, tool: 'bash' },
      occurred_at: '2026-11-21T11:00:00.000Z',
    });
    expect(p.data).toEqual({ session_id: 's1', agent_id: 'agent-1', action_id: 'a10', reason: 'dangerous shell', anomaly_score: 0.95, signals: ['recursive_delete_root'], threshold: 0.8, tool: 'bash' });
  });
});
