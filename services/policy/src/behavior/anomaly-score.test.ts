import { anomalyScore } from './anomaly-score';

describe('anomaly score model', () => {
  test('a quiet agent without violations scores 0', () => {
    expect(anomalyScore({ actions1h: 3, actions24h: 3, violations24h: 0, newTool: false }).score).toBe(0);
  });
  test('violation ratio with a minimum sample of 5', () => {
    const r = anomalyScore({ actions1h: 4, actions24h: 4, violations24h: 3, newTool: false });
    expect(r.factors.violation_ratio).toBe(0.6);
    expect(r.score).toBe(0.54);
  });
  test('bursts are measured against the agent’s own hourly baseline (at least 10/h)', () => {
    expect(anomalyScore({ actions1h: 50, actions24h: 50, violations24h: 0, newTool: false }).factors.burst).toBe(1);
    expect(anomalyScore({ actions1h: 20, actions24h: 20, violations24h: 0, newTool: false }).factors.burst).toBe(0.25);
    // an agent that does 46/h all day is not bursting at 46/h
    expect(anomalyScore({ actions1h: 46, actions24h: 46 * 24, violations24h: 0, newTool: false }).factors.burst).toBe(0);
  });
  test('a new tool counts only for an established agent', () => {
    expect(anomalyScore({ actions1h: 1, actions24h: 5, violations24h: 0, newTool: true }).factors.new_tool).toBe(0);
    const r = anomalyScore({ actions1h: 2, actions24h: 40, violations24h: 0, newTool: true });
    expect(r.factors.new_tool).toBe(1);
    expect(r.score).toBe(0.5);
  });
  test('deterministic and within 0-1', () => {
    const i = { actions1h: 500, actions24h: 600, violations24h: 600, newTool: true };
    expect(anomalyScore(i)).toEqual(anomalyScore(i));
    expect(anomalyScore(i).score).toBeLessThanOrEqual(1);
  });
});
