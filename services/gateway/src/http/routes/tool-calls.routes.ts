/** POST /api/mcp/tools/call: the governed tool call (pipeline in pipeline/tool-call.pipeline.ts). */
import { Router } from 'express';
import type { GatewayDeps } from '../../deps';
import { observePipelineSteps } from '../../pipeline/pipeline-step.metrics';
import type { ToolCallOutcome } from '../../pipeline/tool-call.pipeline';
import { toolCallSchema } from '../../pipeline/tool-call.schema';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

/** The spec's HTTP shape of an outcome: 200 allowed, 202 pending_approval, 403 denial. */
export function outcomeToHttp(o: ToolCallOutcome): { status: number; body: unknown } {
  if (o.kind === 'allowed') {
    return {
      status: 200,
      body: {
        status: 'allowed',
        action_id: o.action_id,
        execution_mode: o.execution_mode,
        ...(o.execution_result ? { execution_result: o.execution_result, latency: o.latency } : {}),
        ...(o.violations.length ? { violations: o.violations, severity: o.severity } : {}),
      },
    };
  }
  if (o.kind === 'pending') return { status: 202, body: { status: 'pending_approval', action_id: o.action_id, message: o.message } };
  return { status: 403, body: { detail: { action_id: o.action_id, violations: o.violations, severity: o.severity, alert_tier: o.alert_tier } } };
}

export function toolCallRoutes(d: GatewayDeps): Router {
  const r = Router();
  r.post('/mcp/tools/call', async (req, res) => {
    const { tenantId } = authOf(req);
    const call = parseWith(toolCallSchema, req.body, 'body');
    const settings = await d.settings.stored(tenantId);
    const timings: Record<string, number> = {};
    const outcome = await d.pipeline.run({ tenantId, settings, timings }, call);
    const { status, body } = outcomeToHttp(outcome);
    // where the time went, per pipeline step (W3C Server-Timing; durations in ms)
    observePipelineSteps(d.registry, timings);
    res.setHeader('Server-Timing', Object.entries(timings).map(([k, v]) => `${k};dur=${v.toFixed(2)}`).join(', '));
    res.status(status).json(body);
  });
  return r;
}
