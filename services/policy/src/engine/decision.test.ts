import { decide } from './decision';

describe('decide (fixed decision semantics)', () => {
  test('no findings: allow, severity none, no alert tier', () => {
    expect(decide([])).toEqual({ decision: 'allow', violations: [], findings: [], severity: 'none', alertTier: '', requiresHuman: false, requiredApprovers: 0 });
  });
  test('high or critical denies; P2 for high, P1 for critical', () => {
    expect(decide([{ id: 'a', kind: 'violation', severity: 'high' }])).toMatchObject({ decision: 'deny', severity: 'high', alertTier: 'P2' });
    expect(decide([{ id: 'a', kind: 'violation', severity: 'high' }, { id: 'b', kind: 'violation', severity: 'critical' }])).toMatchObject({ decision: 'deny', severity: 'critical', alertTier: 'P1' });
  });
  test('an approval rule escalates unless something denies; low/medium are kept', () => {
    expect(decide([{ id: 'm', kind: 'violation', severity: 'medium' }, { id: 'ap', kind: 'approval', severity: 'low' }])).toMatchObject({
      decision: 'requires_human',
      violations: ['m', 'ap'],
      severity: 'medium',
      alertTier: 'P3',
      requiresHuman: true,
    });
    expect(decide([{ id: 'h', kind: 'violation', severity: 'high' }, { id: 'ap', kind: 'approval', severity: 'low' }]).decision).toBe('deny');
    expect(decide([{ id: 'm', kind: 'violation', severity: 'medium' }])).toMatchObject({ decision: 'allow', violations: ['m'], severity: 'medium' });
  });
});
