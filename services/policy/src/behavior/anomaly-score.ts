/**
 * The anomaly score of an agent: a documented, deterministic function of its own recent history,
 * recomputed after every decision (docs/policy.md, "Anomaly score").
 *
 *   burst            = clamp((actions_1h / baseline_per_hour - 1) / 4)
 *                      baseline_per_hour = max((actions_24h - actions_1h) / 23, 10)   (its own pace)
 *   violation_ratio  = clamp(violations_24h / max(actions_24h, 5))
 *   new_tool         = 1 when the tool was never used by an agent with >= 20 actions in 24 h, else 0
 *   score            = 1 - (1 - 0.9 burst) (1 - 0.9 violation_ratio) (1 - 0.5 new_tool)   (noisy-OR, 0-1)
 */
import type { AnomalyFactorValues } from '@agw/shared';

export interface AnomalyInputs {
  actions1h: number;
  actions24h: number;
  violations24h: number;
  newTool: boolean;
}

/** the factors as the API shows them (agw.policy.v1.AnomalyFactors as an object) */
export type AnomalyFactors = AnomalyFactorValues;

export const ANOMALY_MODEL = { minBaselinePerHour: 10, burstSpan: 4, minSample: 5, establishedActions: 20, weights: { burst: 0.9, violations: 0.9, newTool: 0.5 } } as const;

const clamp = (x: number) => Math.min(1, Math.max(0, x));
const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

export function anomalyScore(i: AnomalyInputs): { score: number; factors: AnomalyFactors } {
  const m = ANOMALY_MODEL;
  const baseline = Math.max((i.actions24h - i.actions1h) / 23, m.minBaselinePerHour);
  const burst = clamp((i.actions1h / baseline - 1) / m.burstSpan);
  const violationRatio = clamp(i.violations24h / Math.max(i.actions24h, m.minSample));
  const newTool = i.newTool && i.actions24h >= m.establishedActions ? 1 : 0;
  const score = 1 - (1 - m.weights.burst * burst) * (1 - m.weights.violations * violationRatio) * (1 - m.weights.newTool * newTool);
  return {
    score: r4(clamp(score)),
    factors: {
      burst: r4(burst),
      violation_ratio: r4(violationRatio),
      new_tool: newTool,
      baseline_per_hour: r4(baseline),
      action_count_1h: i.actions1h,
      action_count_24h: i.actions24h,
      violation_count_24h: i.violations24h,
    },
  };
}
