/**
 * Policy endpoints: templates, the caller's active rules, bundle status, replay, and agent behavior
 * (anomaly score, clearing history/counters). Everything is answered by the policy service.
 */
import type { policy } from '@agw/proto';
import { AppError, InputError, NotFoundError, type ValidationIssue, anomalyFactorValues } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths, jsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { isUuid } from '../params';
import { settingsPatchSchema } from '../../tenants/settings.schema';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const uuid = z.string().refine(isUuid, 'must be a UUID (an action_id returned by POST /mcp/tools/call)');
export const replaySchema = z.object({ action_id: uuid }).strict();
/** A policy change not saved yet, as PATCH /dashboard/settings takes it: replay shows what it would decide. */
const candidateSchema = settingsPatchSchema
  .pick({ policy_template: true, policy_config: true, custom_policy: true })
  .strict()
  .meta({ description: 'replay under this policy instead of the active one, without saving it (same checks as PATCH /dashboard/settings)' });
export const replayBulkSchema = z.object({ action_ids: z.array(uuid).min(1).max(1000), candidate: candidateSchema.optional() }).strict();

function candidateOf(c: z.infer<typeof candidateSchema> | undefined): policy.SetTenantPolicyRequest | undefined {
  if (!c) return undefined;
  return {
    tenantId: '',
    policyTemplate: c.policy_template ?? '',
    policyConfigJson: c.policy_config !== undefined ? JSON.stringify(c.policy_config) : '',
    hasPolicyConfig: c.policy_config !== undefined,
    customPolicy: c.custom_policy ?? '',
    hasCustomPolicy: c.custom_policy !== undefined,
  };
}

export const policyTestSchema = z
  .object({ policy: z.string().min(1).max(1_000_000).meta({ description: 'the candidate custom policy (Rego, package agw.custom) with its test_* rules' }) })
  .strict();
const policyTestResponse = z.object({
  passed: z.number().int(),
  failed: z.number().int(),
  errored: z.number().int(),
  results: z.array(z.object({ name: z.string(), file: z.string(), row: z.number().int(), outcome: z.enum(['pass', 'fail', 'error']), error: z.string().optional(), duration_ms: z.number() })),
  coverage: z.object({
    percent: z.number(),
    covered_lines: z.number().int(),
    coverable_lines: z.number().int(),
    files: z.array(z.object({ file: z.string(), percent: z.number(), not_covered: z.array(z.object({ start: z.number().int(), end: z.number().int() })) })),
  }),
});

const AGENT_ID = /^[a-zA-Z0-9._-]{1,256}$/;
function agentParam(value: string | undefined): string {
  if (!value || !AGENT_ID.test(value)) throw new NotFoundError('Agent not found');
  return value;
}

const templatesResponse = z.object({
  templates: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      parameters: z.array(z.object({ name: z.string(), type: z.string(), default: z.unknown().optional(), description: z.string() })),
    }),
  ),
});
const rulesResponse = z.object({
  policy_template: z.string(),
  bundle_revision: z.string(),
  rules: z.array(z.object({ id: z.string(), kind: z.string().meta({ description: 'violation | approval' }), trigger: z.string(), severity: z.string() })),
});
const bundleResponse = z.object({ bundle: z.literal('gateway'), revision: z.string(), hash: z.string(), hash_algorithm: z.literal('sha256'), policy_template: z.string(), activated_at: timestamp().nullable() });
const replayResultSchema = z
  .object({
    action_id: z.string(),
    tool: z.string(),
    original_decision: z.string(),
    replay_decision: z.string(),
    consistent: z.boolean(),
    original_violations: z.array(z.string()),
    replay_violations: z.array(z.string()),
    original_bundle_revision: z.string(),
    replay_bundle_revision: z.string(),
    erased_subjects: z.array(z.string()).optional(),
  })
  .meta({ id: 'ReplayResult' });
const replayBulkResponse = z.object({
  total: z.number().int(),
  replayed: z.number().int(),
  consistent_count: z.number().int(),
  changed_count: z.number().int(),
  not_found: z.array(z.string()),
  results: z.array(replayResultSchema),
});
const anomalyResponse = z.object({ agent_id: z.string(), anomaly_score: z.number(), factors: z.record(z.string(), z.unknown()), updated_at: timestamp().nullable() });
const clearedResponse = z.object({ agent_id: z.string(), cleared: z.boolean(), keys_removed: z.number().int(), anomaly_score_kept: z.boolean() });

function presentReplay(r: policy.ReplayResult): z.infer<typeof replayResultSchema> {
  return {
    action_id: r.actionId,
    tool: r.tool,
    original_decision: r.originalDecision,
    replay_decision: r.replayDecision,
    consistent: r.consistent,
    original_violations: r.originalViolations,
    replay_violations: r.replayViolations,
    original_bundle_revision: r.originalBundleRevision,
    replay_bundle_revision: r.replayBundleRevision,
    ...(r.erasedSubjects.length ? { erased_subjects: r.erasedSubjects } : {}),
  };
}

function presentBundle(b: policy.BundleStatus) {
  return { revision: b.revision, hash: b.hash, hash_algorithm: 'sha256' as const, policy_template: b.policyTemplate, activated_at: b.activatedAt || null };
}

export function policyRoutes(d: GatewayDeps): Router {
  const r = Router();

  r.get('/policy/templates', async (_req, res) => {
    const { templates } = await d.policy.listTemplates({});
    reply(res, templatesResponse, {
      templates: templates.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: t.parameters.map((p) => ({ name: p.name, type: p.type, default: JSON.parse(p.defaultJson), description: p.description })),
      })),
    });
  });

  r.get('/policy/rules', async (req, res) => {
    const { tenantId } = authOf(req);
    const out = await d.policy.listRules({ tenantId });
    reply(res, rulesResponse, { policy_template: out.policyTemplate, bundle_revision: out.bundleRevision, rules: out.rules.map((x) => ({ id: x.id, kind: x.kind, trigger: x.trigger, severity: x.severity })) });
  });

  r.get('/bundles/gateway/status', async (req, res) => {
    const { tenantId } = authOf(req);
    reply(res, bundleResponse, { bundle: 'gateway' as const, ...presentBundle(await d.policy.getBundleStatus({ tenantId })) });
  });

  r.post('/audit/replay', async (req, res) => {
    const { tenantId } = authOf(req);
    const { action_id } = parseWith(replaySchema, req.body, 'body');
    const [result] = (await d.policy.replay({ tenantId, actionIds: [action_id.toLowerCase()], candidate: undefined })).results;
    if (!result?.found) throw new NotFoundError('Action not found (or decided before the policy: gateway constraint or failure mode)');
    reply(res, replayResultSchema, presentReplay(result));
  });

  r.post('/audit/replay-bulk', async (req, res) => {
    const { tenantId } = authOf(req);
    const { action_ids, candidate } = parseWith(replayBulkSchema, req.body, 'body');
    const { results } = await d.policy.replay({ tenantId, actionIds: action_ids.map((a) => a.toLowerCase()), candidate: candidateOf(candidate) });
    const found = results.filter((x) => x.found);
    reply(res, replayBulkResponse, {
      total: results.length,
      replayed: found.length,
      consistent_count: found.filter((x) => x.consistent).length,
      changed_count: found.filter((x) => !x.consistent).length,
      not_found: results.filter((x) => !x.found).map((x) => x.actionId),
      results: found.map(presentReplay),
    });
  });

  r.post('/policy/test', async (req, res) => {
    const { tenantId } = authOf(req);
    const { policy: source } = parseWith(policyTestSchema, req.body, 'body');
    let out: policy.TestPolicyResponse;
    try {
      out = await d.policy.testPolicy({ tenantId, customPolicy: source });
    } catch (e) {
      // the service names the field custom_policy (as a save does); here the candidate is body.policy
      if (e instanceof AppError && e.code === 'invalid_input' && Array.isArray(e.detail)) throw new InputError((e.detail as ValidationIssue[]).map((i) => ({ ...i, loc: ['body', 'policy'] })));
      throw e;
    }
    reply(res, policyTestResponse, {
      passed: out.passed,
      failed: out.failed,
      errored: out.errored,
      results: out.results.map((x) => ({ name: x.name, file: x.file, row: x.row, outcome: x.outcome as 'pass' | 'fail' | 'error', ...(x.error ? { error: x.error } : {}), duration_ms: x.durationMs })),
      coverage: {
        percent: out.coveragePercent,
        covered_lines: out.coveredLines,
        coverable_lines: out.coverableLines,
        files: out.coverageFiles.map((f) => ({ file: f.file, percent: f.percent, not_covered: f.notCovered.map((l) => ({ start: l.start, end: l.end })) })),
      },
    });
  });

  r.get('/agents/:agent_id/anomaly_score', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const a = await d.policy.getAnomalyScore({ tenantId, agentId });
    reply(res, anomalyResponse, { agent_id: agentId, anomaly_score: a.anomalyScore, factors: anomalyFactorValues(a.factors), updated_at: a.updatedAt || null });
  });

  r.delete('/agents/:agent_id/history', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const c = await d.policy.clearAgentHistory({ tenantId, agentId });
    reply(res, clearedResponse, { agent_id: agentId, cleared: c.cleared, keys_removed: c.keysRemoved, anomaly_score_kept: false });
  });

  r.delete('/agents/:agent_id/counters', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const c = await d.policy.clearAgentCounters({ tenantId, agentId });
    reply(res, clearedResponse, { agent_id: agentId, cleared: c.cleared, keys_removed: c.keysRemoved, anomaly_score_kept: true });
  });

  return r;
}

const agentPath = [pathParam('agent_id', { type: 'string', pattern: '^[a-zA-Z0-9._-]+$', maxLength: 256 })];
const unknownAgent = errors[404]('not a valid agent id');

addPaths({
  '/policy/templates': { get: { summary: 'Policy templates with their parameters, types and defaults', responses: { 200: response('templates', templatesResponse) } } },
  '/policy/rules': { get: { summary: "The active rules of the caller's policy", responses: { 200: response('rules', rulesResponse) } } },
  '/bundles/gateway/status': { get: { summary: 'Current policy bundle revision and hash', responses: { 200: response('bundle status', bundleResponse) } } },
  '/audit/replay': {
    post: {
      summary: 'Re-evaluate a stored action under the current policy',
      requestBody: jsonBody(replaySchema),
      responses: { 200: response('the replay', replayResultSchema), 404: errors[404]('unknown action (or one decided before the policy)'), 422: errors[422]() },
    },
  },
  '/audit/replay-bulk': {
    post: { summary: 'Re-evaluate up to 1000 stored actions under the current policy, or under a candidate policy before it is saved', requestBody: jsonBody(replayBulkSchema), responses: { 200: response('the replays', replayBulkResponse), 422: errors[422]() } },
  },
  '/policy/test': {
    post: {
      summary: "Run a candidate custom policy's test_* rules like opa test: pass/fail/error per test and coverage; nothing is saved",
      requestBody: jsonBody(policyTestSchema),
      responses: { 200: response('the test results and coverage', policyTestResponse), 422: errors[422]('the candidate does not compile (file, line, column at body.policy)') },
    },
  },
  '/agents/{agent_id}/anomaly_score': { get: { summary: 'Current anomaly score of an agent (0-1) and its factors', parameters: agentPath, responses: { 200: response('score', anomalyResponse), 404: unknownAgent } } },
  '/agents/{agent_id}/history': { delete: { summary: 'Clear the behavioral history of an agent (counters and anomaly score)', parameters: agentPath, responses: { 200: response('cleared', clearedResponse), 404: unknownAgent } } },
  '/agents/{agent_id}/counters': { delete: { summary: 'Clear the counters and actions of an agent, keeping its anomaly score', parameters: agentPath, responses: { 200: response('cleared', clearedResponse), 404: unknownAgent } } },
});
