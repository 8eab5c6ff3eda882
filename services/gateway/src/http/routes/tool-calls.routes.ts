/** POST /api/mcp/tools/call: the governed tool call (pipeline in pipeline/tool-call.pipeline.ts). */
import { type RequestHandler, Router } from 'express';
import { z } from 'zod';
import type { ToolCallsFeature } from '../../features/tool-calls.feature';
import { EXTERNAL_MS } from '../admission';
import { TOOL_CALL_PATH } from '../governed-edge';
import { addPaths, jsonBody } from '../../openapi/openapi';
import { errorSchema, errors, response } from '../../openapi/schema';
import { observePipelineSteps } from '../../pipeline/pipeline-step.metrics';
import { RECEIPT_HEADER, receiptHeader } from '../../pipeline/call-receipt';
import type { ToolCallOutcome } from '../../pipeline/tool-call.pipeline';
import { toolCallSchema } from '../../pipeline/tool-call.schema';
import { actsForOf, authOf } from '../request-context';
import { parseWith } from '../validation';

const latencySchema = z.object({ opa_eval_ms: z.number(), hsm_fetch_ms: z.number(), execution_ms: z.number(), total_ms: z.number() });
export const executionResultSchema = z
  .object({ status_code: z.number().int(), body: z.unknown() })
  .meta({ id: 'ExecutionResult', description: 'what the upstream tool answered when the gateway brokered the call with its HSM-held credential' });

export const receiptSchema = z
  .object({
    note: z.string().meta({ description: 'the receipt: a C2SP signed note (agw-receipt/v1) by the audit service\'s receipt key' }),
    key: z.string().meta({ description: 'the delegation of the receipt key: a signed note (agw-receipt-key/v1) by the tenant\'s log key' }),
    arguments_salt: z.string().optional().meta({ description: 'base64 of the 16-byte salt of the arguments hash; given only here, never stored' }),
  })
  .meta({ id: 'Receipt', description: 'the signed receipt of the decision\'s audit record (docs/evidence.md, "Receipts"); absent when none could be signed' });

export const allowedSchema = z.object({
  status: z.literal('allowed'),
  action_id: z.string(),
  execution_mode: z.enum(['agent_direct', 'gateway_brokered']),
  execution_result: executionResultSchema.optional(),
  latency: latencySchema.optional(),
  violations: z.array(z.string()).optional().meta({ description: 'present when the policy allowed with (low severity) violations' }),
  severity: z.string().optional(),
  receipt: receiptSchema.optional(),
});
export const pendingSchema = z.object({ status: z.literal('pending_approval'), action_id: z.string(), message: z.string(), receipt: receiptSchema.optional() });
export const denialSchema = z
  .object({ detail: z.object({ action_id: z.string(), violations: z.array(z.string()), severity: z.string(), alert_tier: z.string() }), receipt: receiptSchema.optional() })
  .meta({ id: 'PolicyDenial' });

type HttpOutcome = { status: 200; body: z.infer<typeof allowedSchema> } | { status: 202; body: z.infer<typeof pendingSchema> } | { status: 403; body: z.infer<typeof denialSchema> };

/** The spec's HTTP shape of an outcome: 200 allowed, 202 pending_approval, 403 denial. */
export function outcomeToHttp(o: ToolCallOutcome): HttpOutcome {
  if (o.kind === 'allowed') {
    return {
      status: 200,
      body: {
        status: 'allowed',
        action_id: o.action_id,
        execution_mode: o.execution_mode,
        ...(o.execution_result ? { execution_result: o.execution_result, latency: o.latency } : {}),
        ...(o.violations.length ? { violations: o.violations, severity: o.severity } : {}),
        ...(o.receipt ? { receipt: o.receipt } : {}),
      },
    };
  }
  const receipt = o.receipt ? { receipt: o.receipt } : {};
  if (o.kind === 'pending') return { status: 202, body: { status: 'pending_approval', action_id: o.action_id, message: o.message, ...receipt } };
  return { status: 403, body: { detail: { action_id: o.action_id, violations: o.violations, severity: o.severity, alert_tier: o.alert_tier }, ...receipt } };
}

/**
 * The route. `before`: the middlewares it runs after in its own router (app.ts mounts it ahead of the
 * `/api` router with the edge's chain for this one route); without them it sits in the `/api` router.
 */
export function toolCallRoutes(d: ToolCallsFeature, before: RequestHandler[] = []): Router {
  const r = Router();
  r.post(TOOL_CALL_PATH, ...before, toolCallHandler(d));
  return r;
}

/** The governed call's handler, after authentication: express's route above and the edge's (http/governed-edge.ts) run it. */
export function toolCallHandler(d: ToolCallsFeature): RequestHandler {
  return async (req, res) => {
    const auth = authOf(req);
    const { tenantId, keyHash, keyScope } = auth;
    const call = parseWith(toolCallSchema, req.body, 'body');
    const settings = await d.settings.stored(tenantId);
    const timings: Record<string, number> = {};
    // a member's console session making the call is its initiator (never an approver of it: four eyes)
    const initiatorUserId = auth.method === 'jwt' && !auth.viaApiKey ? auth.userId : undefined;
    const outcome = await d.pipeline.run({ tenantId, settings, timings, apiKeyHash: keyHash, agentKey: keyScope === 'agent', actsFor: actsForOf(auth), ...(initiatorUserId ? { initiatorUserId } : {}) }, call);
    const { status, body } = outcomeToHttp(outcome);
    // a brokered upstream's execution time is the tool's, not the gateway's (http/admission.ts)
    if (timings.broker) res.locals[EXTERNAL_MS] = timings.broker;
    // where the time went, per pipeline step (W3C Server-Timing; durations in ms)
    if (outcome.receipt) res.setHeader(RECEIPT_HEADER, receiptHeader(outcome.receipt));
    res.setHeader('Server-Timing', Object.entries(timings).map(([k, v]) => `${k};dur=${v.toFixed(2)}`).join(', '));
    res.status(status).json(body);
    // and into the per-step histograms once the answer is on its way: the caller does not wait for them
    observePipelineSteps(d.registry, timings);
  };
}

addPaths({
  [TOOL_CALL_PATH]: {
    post: {
      summary: 'Submit a tool call for governance',
      requestBody: jsonBody(toolCallSchema),
      responses: {
        200: response('allowed by the policy (executed by the gateway when a credential is registered for the tool)', allowedSchema),
        202: response('queued for human approval', pendingSchema),
        403: response('denied by the policy (PolicyDenial); or {detail}: an MCP client’s OAuth token, which is bound to the MCP server', z.union([denialSchema, errorSchema])),
        422: errors[422](),
        429: errors[429]('tenant rate limit exceeded: {error: rate_limit_exceeded, tenant_id, rate_limit_rps, rate_limit_burst}'),
        502: errors[502]('policy engine unreachable (fail-closed)'),
        503: errors[503]('overloaded (the gateway’s in-flight limits, or a peer connected but too slow: nothing was decided) or a store unreachable; Retry-After says when to retry'),
      },
    },
  },
});
