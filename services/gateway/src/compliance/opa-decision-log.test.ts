import { decisionPath, opaDecisionEvents, toOpaLines } from './opa-decision-log';

const ctx = (template: string, revision: string | null) => ({ tenantId: 't-1', productVersion: '1.0.0', current: { template, revision } });

describe('OPA decision log', () => {
  test('the path is the decision rule of the current revision’s package, else the root of the packages', () => {
    expect(decisionPath('abc', ctx('general', 'abc'))).toBe('agw/general/decision');
    expect(decisionPath('abc', ctx('custom', 'abc'))).toBe('agw/custom/decision');
    expect(decisionPath('old', ctx('general', 'abc'))).toBe('agw');
    expect(decisionPath('abc', ctx('general', null))).toBe('agw');
    expect(decisionPath('abc', { tenantId: 't-1', productVersion: '1.0.0' })).toBe('agw');
  });

  test('one event per policy decision, the first record of its action with the input’s decision; one JSON object per line', () => {
    const row = {
      action_id: 'a-1',
      agent_id: 'agent',
      agent_type: 'assistant',
      agent_version: '1',
      tool: 'svc',
      method: 'run',
      session_id: null,
      stored_params: { x: 1 },
      pii_detected: false,
      behavioral: null,
      decision: 'requires_human',
      violations: ['needs a human'],
      severity: 'medium',
      bundle_revision: 'abc',
      passes: 1,
      evaluated_at: new Date('2026-11-29T00:00:00.000Z'),
    };
    const rec = (id: number, action_id: string, decision: string) => ({ id, leaf_index: id - 1, prev_hash: '', record_hash: '', action_id, decision, requires_human: decision === 'requires_human' });
    const events = opaDecisionEvents([rec(1, 'a-1', 'requires_human'), rec(2, 'a-1', 'allow'), rec(3, 'a-2', 'deny')], [row], ctx('general', 'abc'));
    expect(events).toEqual([
      {
        decision_id: 'a-1',
        path: 'agw/general/decision',
        input: { agent_id: 'agent', agent_type: 'assistant', agent_version: '1', tool: 'svc', method: 'run', params: { x: 1 }, pii_detected: false, session_id: null },
        result: { decision: 'requires_human', violations: ['needs a human'], severity: 'medium', requires_human: true, passes: 1 },
        timestamp: '2026-11-29T00:00:00.000Z',
        bundles: { gateway: { revision: 'abc' } },
        labels: { app: 'agw', id: 't-1', version: '1.0.0' },
      },
    ]);
    const lines = toOpaLines([...events, ...events]);
    expect(lines.split('\n')).toHaveLength(3);
    expect(JSON.parse(lines.split('\n')[1])).toEqual(JSON.parse(JSON.stringify(events[0])));
  });
});
