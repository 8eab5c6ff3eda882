import { type ActionRecord, hashedContent } from './action-record';
import { type ActionFacts, controlPlaneRecord, governedRecord, humanDecisionRecord, observedRecord } from './record-builders';

const facts: ActionFacts = {
  action_id: '6f1c1c39-5f43-4c71-9b1e-0c4b7a0f6a11',
  agent_id: 'agent-1',
  agent_type: 'assistant',
  agent_version: '1.0.0',
  tool: 'svc_web_search',
  method: 'search',
  session_id: 'sess-1',
  requested_at: '2026-11-21T23:59:59.123Z',
};
const outcome = { params: { q: 'x' }, violations: ['v1'], severity: 'medium', details: { stage: 'policy' } };
const FIELDS = Object.keys(hashedContent({} as ActionRecord)).sort();

/** every field of the record, none more, none undefined (the canonical JSON would leave it out) */
function expectComplete(r: ActionRecord): void {
  expect(Object.keys(r).sort()).toEqual(FIELDS);
  for (const k of FIELDS) expect((r as unknown as Record<string, unknown>)[k]).not.toBeUndefined();
}

describe('record builders', () => {
  describe('governedRecord', () => {
    it('a denial: source mcp_governed, no execution, no human, no alert tier unless given', () => {
      const r = governedRecord(facts, { ...outcome, decision: 'deny', bundle_revision: 'rev-1' });
      expectComplete(r);
      expect(r).toEqual({
        ...facts,
        ...outcome,
        decision: 'deny',
        alert_tier: null,
        requires_human: false,
        execution_mode: null,
        source: 'mcp_governed',
        bundle_revision: 'rev-1',
      });
      expect(governedRecord(facts, { ...outcome, decision: 'deny', bundle_revision: 'rev-1', alert_tier: 'P1', requires_human: true })).toMatchObject({ alert_tier: 'P1', requires_human: true, execution_mode: null });
    });

    it('a queued call always requires a human and has no execution mode', () => {
      const r = governedRecord(facts, { ...outcome, decision: 'requires_human', bundle_revision: 'rev-1', alert_tier: 'P2' });
      expectComplete(r);
      expect(r).toMatchObject({ decision: 'requires_human', requires_human: true, execution_mode: null, alert_tier: 'P2', source: 'mcp_governed' });
    });

    it('an allowed call says who executes it', () => {
      for (const mode of ['agent_direct', 'gateway_brokered'] as const) {
        const r = governedRecord(facts, { ...outcome, decision: 'allow', execution_mode: mode, bundle_revision: 'rev-1' });
        expectComplete(r);
        expect(r).toMatchObject({ decision: 'allow', execution_mode: mode, requires_human: false, alert_tier: null, source: 'mcp_governed' });
      }
    });

    it('passes params and details through as the same objects (the gateway reuses their JSON text)', () => {
      const r = governedRecord(facts, { ...outcome, decision: 'deny', bundle_revision: 'rev-1' });
      expect(r.params).toBe(outcome.params);
      expect(r.details).toBe(outcome.details);
      expect(r.violations).toBe(outcome.violations);
    });

    it('ignores keys that are not fields of the record', () => {
      const wider = { ...outcome, decision: 'deny' as const, bundle_revision: 'rev-1', source: 'control_plane', extra: 1 };
      const r = governedRecord({ ...facts, ...({ source: 'x', other: 2 } as object) } as ActionFacts, wider);
      expectComplete(r);
      expect(r.source).toBe('mcp_governed');
    });
  });

  describe('observedRecord', () => {
    it("decision observed, executed by the agent itself, bundle 'observed', no alert tier, no human", () => {
      const r = observedRecord(facts, outcome);
      expectComplete(r);
      expect(r).toEqual({
        ...facts,
        ...outcome,
        decision: 'observed',
        alert_tier: null,
        requires_human: false,
        execution_mode: 'agent_direct',
        source: 'mcp_observed',
        bundle_revision: 'observed',
      });
    });
  });

  describe('controlPlaneRecord', () => {
    it('source control_plane; no alert tier, no human, no execution unless given', () => {
      const r = controlPlaneRecord({ ...facts, session_id: null }, { ...outcome, decision: 'allow', bundle_revision: 'subject-erasure' });
      expectComplete(r);
      expect(r).toEqual({
        ...facts,
        ...outcome,
        session_id: null,
        decision: 'allow',
        alert_tier: null,
        requires_human: false,
        execution_mode: null,
        source: 'control_plane',
        bundle_revision: 'subject-erasure',
      });
    });

    it('takes the alert tier, the human and the execution mode when given', () => {
      const r = controlPlaneRecord(facts, { ...outcome, decision: 'quarantine', bundle_revision: 'federation-pin', alert_tier: 'escalate', requires_human: true, execution_mode: 'gateway_brokered' });
      expectComplete(r);
      expect(r).toMatchObject({ decision: 'quarantine', alert_tier: 'escalate', requires_human: true, execution_mode: 'gateway_brokered', source: 'control_plane' });
    });

    it('a record built without requested_at is stamped now (ISO 8601 UTC with milliseconds)', () => {
      const before = Date.now();
      const { requested_at, ...noTime } = facts;
      const r = controlPlaneRecord(noTime, { ...outcome, decision: 'deny', bundle_revision: 'managed' });
      expect(requested_at).toBeDefined();
      expect(r.requested_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(r.requested_at)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(r.requested_at)).toBeLessThanOrEqual(Date.now());
    });
  });

  describe('humanDecisionRecord', () => {
    const queued = {
      action_id: facts.action_id,
      agent_id: 'agent-1',
      agent_type: 'assistant',
      agent_version: '1.0.0',
      tool: 'stripe',
      method: 'refund',
      params: { amount: 10 },
      opa_result: { requires_human: true, violations: ['amount_over_limit'], severity: 'high' },
      session_id: null,
    };

    it("the queued action's facts, violations and severity; requires_human; bundle 'human-approval'; control_plane", () => {
      const details = { approval: 'approved', decided_by: 'alice' };
      const r = humanDecisionRecord(queued, { decision: 'allow', execution_mode: 'gateway_brokered', details, requested_at: '2026-11-22T00:00:00.000Z' });
      expectComplete(r);
      const { opa_result: _, ...queuedFacts } = queued;
      expect(r).toEqual({
        ...queuedFacts,
        decision: 'allow',
        violations: ['amount_over_limit'],
        severity: 'high',
        alert_tier: null,
        requires_human: true,
        execution_mode: 'gateway_brokered',
        source: 'control_plane',
        bundle_revision: 'human-approval',
        details,
        requested_at: '2026-11-22T00:00:00.000Z',
      });
      expect(r.params).toBe(queued.params);
    });

    it('not executed unless an execution mode is given (a rejection, an expiry)', () => {
      const r = humanDecisionRecord(queued, { decision: 'deny', details: { approval: 'expired' }, requested_at: '2026-11-22T00:00:00.000Z' });
      expectComplete(r);
      expect(r).toMatchObject({ decision: 'deny', execution_mode: null, requires_human: true, bundle_revision: 'human-approval' });
    });
  });
});
