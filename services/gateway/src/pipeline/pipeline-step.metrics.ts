/**
 * Per-step latency of the governed tool call as a Prometheus histogram: the same step durations the route
 * returns in its Server-Timing header (pii, constraints, policy, broker, audit, publish, …), so a dashboard
 * shows p50/p99 per step. `step` is a fixed set named in the pipeline code; no tenant label.
 */
import { Histogram, type Registry } from '@agw/shared';

const byRegistry = new WeakMap<Registry, Histogram<'step'>>();

/** Observe one call's step timings (ms, as the pipeline fills them) in the registry's step histogram. */
export function observePipelineSteps(registry: Registry, timingsMs: Record<string, number>): void {
  let h = byRegistry.get(registry);
  if (!h) {
    h = new Histogram({
      name: 'agw_pipeline_step_duration_seconds',
      help: 'Duration of one step of the governed tool-call pipeline (the Server-Timing steps)',
      labelNames: ['step'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    });
    byRegistry.set(registry, h);
  }
  for (const [step, ms] of Object.entries(timingsMs)) h.observe({ step }, ms / 1000);
}
