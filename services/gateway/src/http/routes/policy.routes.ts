/**
 * Policy endpoints: templates, the caller's active rules, bundle status, replay, and agent behavior
 * (anomaly score, clearing history/counters). Everything is answered by the policy service.
 */
import { type policy, unsetAsNull } from '@agw/proto';
import { AppError, InputError, NotFoundError, type ValidationIssue, anomalyFactorValues, fromAnswerJson, jsonField, jsonOf } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { PolicyFeature } from '../../features/policy.feature';
import { addPaths, jsonBody, optionalJsonBody, pathParam } from '../../openapi/openapi';
import { errors, reply, response, timestamp } from '../../openapi/schema';
import { isUuid } from '../params';
import { pick } from '../present';
import { overrideFailingTestsSchema, settingsPatchSchema } from '../../tenants/settings.schema';
import { authOf } from '../request-context';
import { deciderOf } from './approvals.routes';
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
    tenant_id: '',
    policy_template: c.policy_template ?? '',
    ...jsonField('policy_config', c.policy_config),
    has_policy_config: c.policy_config !== undefined,
    custom_policy: c.custom_policy ?? '',
    has_custom_policy: c.custom_policy !== undefined,
    actor: '',
    override_failing_tests: undefined,
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

/** Bounds of a shadow (policy service SHADOW_BOUNDS): calls and duration, each with a default. */
const SHADOW_MAX_CALLS = 1_000_000;
const SHADOW_MAX_SECONDS = 30 * 24 * 3600;
export const shadowStartSchema = settingsPatchSchema
  .pick({ policy_template: true, policy_config: true, custom_policy: true })
  .extend({
    max_calls: z.number().int().min(1).max(SHADOW_MAX_CALLS).optional().meta({ description: 'the shadow ends by itself after this many governed calls (default 10000)' }),
    duration_seconds: z.number().int().min(1).max(SHADOW_MAX_SECONDS).optional().meta({ description: 'the shadow ends by itself after this time (default 86400, at most 30 days)' }),
    expires_at: z.iso.datetime({ offset: true }).optional().meta({ description: 'instead of duration_seconds: when the shadow ends by itself (at most 30 days ahead)' }),
  })
  .strict()
  .refine((b) => b.policy_template !== undefined || b.policy_config !== undefined || b.custom_policy !== undefined, {
    message: 'a candidate needs at least one of policy_template, policy_config, custom_policy (as PATCH /dashboard/settings takes them)',
    path: ['policy_template'],
  })
  .refine((b) => !(b.duration_seconds !== undefined && b.expires_at !== undefined), { message: 'give duration_seconds or expires_at, not both', path: ['expires_at'] });
export const shadowPromoteSchema = z.object({ override_failing_tests: overrideFailingTestsSchema.optional() }).strict();

const shadowReportResponse = z
  .object({
    status: z.enum(['none', 'running', 'ended', 'promoted', 'discarded']),
    shadow_id: z.string().nullable(),
    policy_template: z.string().nullable(),
    revision: z.string().nullable().meta({ description: "the candidate's bundle revision" }),
    live_revision: z.string().meta({ description: 'the bundle revision in force now' }),
    started_by: z.string().nullable(),
    started_at: timestamp().nullable(),
    expires_at: timestamp().nullable(),
    max_calls: z.number().int(),
    calls: z.number().int().meta({ description: 'governed calls the candidate decided' }),
    differing: z.number().int().meta({ description: 'calls whose candidate decision differs from the live one' }),
    dropped: z.number().int().meta({ description: 'calls not shadowed because the evaluation queue was full' }),
    ended_at: timestamp().nullable(),
    end_reason: z.string().nullable().meta({ description: 'max_calls | expired | promoted | discarded' }),
    transitions: z.array(z.object({ live: z.string(), candidate: z.string(), count: z.number().int() })).meta({ description: 'counts by live → candidate decision' }),
    rules: z
      .array(z.object({ rule: z.string(), change: z.enum(['added', 'removed']), count: z.number().int() }))
      .meta({ description: 'the violation rules behind the differences: added (the candidate finds it, the live policy does not) or removed' }),
    samples: z.array(
      z.object({
        action_id: z.string(),
        record: z.string().meta({ description: 'the action’s audit records: GET this path' }),
        agent_id: z.string(),
        tool: z.string(),
        live_decision: z.string(),
        live_violations: z.array(z.string()),
        candidate_decision: z.string(),
        candidate_violations: z.array(z.string()),
        live_eval_ms: z.number(),
        candidate_eval_ms: z.number(),
        decided_at: timestamp(),
      }),
    ),
    eval_ms: z.object({ live_avg: z.number(), candidate_avg: z.number(), candidate_max: z.number() }),
  })
  .meta({ id: 'ShadowReport' });
const promotedResponse = z.object({ policy_template: z.string(), bundle_revision: z.string(), activated_at: timestamp().nullable() });

function presentShadow(s: policy.ShadowReport): z.infer<typeof shadowReportResponse> {
  const none = s.status === 'none';
  return {
    status: s.status as z.infer<typeof shadowReportResponse>['status'],
    shadow_id: none ? null : s.shadow_id,
    policy_template: none ? null : s.policy_template,
    revision: none ? null : s.revision,
    live_revision: s.live_revision,
    started_by: none ? null : s.started_by,
    started_at: s.started_at || null,
    expires_at: s.expires_at || null,
    ...pick(s, ['max_calls', 'calls', 'differing', 'dropped']),
    ended_at: s.ended_at || null,
    end_reason: s.end_reason || null,
    transitions: s.transitions.map((t) => ({ live: t.live, candidate: t.candidate, count: t.count })),
    rules: s.rules.map((x) => ({ rule: x.rule, change: x.change as 'added' | 'removed', count: x.count })),
    samples: s.samples.map((x) => ({ ...x, record: `/api/audit/actions/${x.action_id}` })),
    eval_ms: { live_avg: s.live_eval_ms_avg, candidate_avg: s.candidate_eval_ms_avg, candidate_max: s.candidate_eval_ms_max },
  };
}

export const bundleSourceSchema = z
  .object({
    url: z.string().max(2048).meta({ description: 'HTTPS URL of the OPA bundle (.tar.gz), polled with its ETag through the egress rules' }),
    public_key: z.string().min(1).max(16_384).meta({ description: "PEM public key (SPKI: RSA, EC or Ed25519) the bundle's .signatures.json must verify with" }),
    scope: z.string().max(256).optional().meta({ description: 'the scope the signature must carry (OPA signing scope), when the pipeline sets one' }),
    activation: z.enum(['direct', 'shadow']).default('direct').meta({ description: 'a new bundle becomes live at once (direct) or goes into shadow first (shadow)' }),
    shadow_max_calls: z.number().int().min(1).max(SHADOW_MAX_CALLS).optional(),
    shadow_duration_seconds: z.number().int().min(1).max(SHADOW_MAX_SECONDS).optional(),
  })
  .strict();
const bundleSourceResponse = z
  .object({
    url: z.string(),
    scope: z.string().nullable(),
    activation: z.enum(['direct', 'shadow']),
    shadow_max_calls: z.number().int().nullable(),
    shadow_duration_seconds: z.number().int().nullable(),
    etag: z.string().nullable(),
    last_polled_at: timestamp().nullable(),
    last_outcome: z.string().nullable().meta({ description: 'activated | shadowed | unchanged | refused | waiting (a shadow runs: taken once it is over) | error' }),
    last_detail: z.string().nullable(),
    revision: z.string().nullable().meta({ description: "the last bundle taken: its .manifest revision" }),
    digest: z.string().nullable().meta({ description: 'the last bundle taken: SHA-256 of the .tar.gz' }),
    created_by: z.string(),
    created_at: timestamp(),
    poll_outcome: z.string().optional().meta({ description: 'the outcome of the poll this request made' }),
  })
  .meta({ id: 'BundleSource' });

function presentSource(s: policy.BundleSource): z.infer<typeof bundleSourceResponse> {
  return {
    url: s.url,
    activation: s.activation as 'direct' | 'shadow',
    ...unsetAsNull(s, ['scope', 'shadow_max_calls', 'etag', 'last_polled_at', 'last_outcome', 'last_detail', 'revision', 'digest']),
    shadow_duration_seconds: s.shadow_seconds || null,
    created_by: s.created_by,
    created_at: s.created_at,
    ...(s.poll_outcome ? { poll_outcome: s.poll_outcome } : {}),
  };
}

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

/** A replay result as the API shows it: the message without `found`, and erased_subjects only when there are some. */
function presentReplay({ found: _found, erased_subjects, ...r }: policy.ReplayResult): z.infer<typeof replayResultSchema> {
  return { ...r, ...(erased_subjects.length ? { erased_subjects } : {}) };
}

function presentBundle(b: policy.BundleStatus) {
  return { revision: b.revision, hash: b.hash, hash_algorithm: 'sha256' as const, policy_template: b.policy_template, activated_at: b.activated_at || null };
}

export function policyRoutes(d: PolicyFeature): Router {
  const r = Router();

  r.get('/policy/templates', async (_req, res) => {
    const { templates } = await d.policy.listTemplates({});
    reply(res, templatesResponse, {
      templates: templates.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: t.parameters.map((p) => ({ name: p.name, type: p.type, default: fromAnswerJson(jsonOf(p, 'default'), 'default'), description: p.description })),
      })),
    });
  });

  r.get('/policy/rules', async (req, res) => {
    const { tenantId } = authOf(req);
    const out = await d.policy.listRules({ tenant_id: tenantId });
    reply(res, rulesResponse, { policy_template: out.policy_template, bundle_revision: out.bundle_revision, rules: out.rules.map((x) => ({ id: x.id, kind: x.kind, trigger: x.trigger, severity: x.severity })) });
  });

  r.get('/bundles/gateway/status', async (req, res) => {
    const { tenantId } = authOf(req);
    reply(res, bundleResponse, { bundle: 'gateway' as const, ...presentBundle(await d.policy.getBundleStatus({ tenant_id: tenantId })) });
  });

  r.post('/audit/replay', async (req, res) => {
    const { tenantId } = authOf(req);
    const { action_id } = parseWith(replaySchema, req.body, 'body');
    const [result] = (await d.policy.replay({ tenant_id: tenantId, action_ids: [action_id.toLowerCase()], candidate: undefined })).results;
    if (!result?.found) throw new NotFoundError('Action not found (or decided before the policy: gateway constraint or failure mode)');
    reply(res, replayResultSchema, presentReplay(result));
  });

  r.post('/audit/replay-bulk', async (req, res) => {
    const { tenantId } = authOf(req);
    const { action_ids, candidate } = parseWith(replayBulkSchema, req.body, 'body');
    const { results } = await d.policy.replay({ tenant_id: tenantId, action_ids: action_ids.map((a) => a.toLowerCase()), candidate: candidateOf(candidate) });
    const found = results.filter((x) => x.found);
    reply(res, replayBulkResponse, {
      total: results.length,
      replayed: found.length,
      consistent_count: found.filter((x) => x.consistent).length,
      changed_count: found.filter((x) => !x.consistent).length,
      not_found: results.filter((x) => !x.found).map((x) => x.action_id),
      results: found.map(presentReplay),
    });
  });

  r.post('/policy/test', async (req, res) => {
    const { tenantId } = authOf(req);
    const { policy: source } = parseWith(policyTestSchema, req.body, 'body');
    let out: policy.TestPolicyResponse;
    try {
      out = await d.policy.testPolicy({ tenant_id: tenantId, custom_policy: source });
    } catch (e) {
      // the service names the field custom_policy (as a save does); here the candidate is body.policy
      if (e instanceof AppError && e.code === 'invalid_input' && Array.isArray(e.detail)) throw new InputError((e.detail as ValidationIssue[]).map((i) => ({ ...i, loc: ['body', 'policy'] })));
      throw e;
    }
    reply(res, policyTestResponse, {
      passed: out.passed,
      failed: out.failed,
      errored: out.errored,
      results: out.results.map((x) => ({ name: x.name, file: x.file, row: x.row, outcome: x.outcome as 'pass' | 'fail' | 'error', ...(x.error ? { error: x.error } : {}), duration_ms: x.duration_ms })),
      coverage: {
        percent: out.coverage_percent,
        covered_lines: out.covered_lines,
        coverable_lines: out.coverable_lines,
        files: out.coverage_files.map((f) => ({ file: f.file, percent: f.percent, not_covered: f.not_covered.map((l) => ({ start: l.start, end: l.end })) })),
      },
    });
  });

  r.get('/policy/shadow', async (req, res) => {
    const { tenantId } = authOf(req);
    reply(res, shadowReportResponse, presentShadow(await d.policy.getShadow({ tenant_id: tenantId })));
  });

  r.put('/policy/shadow', async (req, res) => {
    const auth = authOf(req);
    const b = parseWith(shadowStartSchema, req.body, 'body');
    let seconds = b.duration_seconds ?? 0;
    if (b.expires_at !== undefined) {
      seconds = Math.ceil((Date.parse(b.expires_at) - Date.now()) / 1000);
      if (seconds < 1 || seconds > SHADOW_MAX_SECONDS) throw InputError.at(['body', 'expires_at'], 'expires_at must be in the future, at most 30 days ahead', 'range');
    }
    const candidate = candidateOf({ policy_template: b.policy_template, policy_config: b.policy_config, custom_policy: b.custom_policy })!;
    const out = await d.policy.startShadow({ tenant_id: auth.tenantId, candidate: { ...candidate, tenant_id: auth.tenantId }, max_calls: b.max_calls ?? 0, duration_seconds: seconds, actor: deciderOf(auth) });
    reply(res, shadowReportResponse, presentShadow(out), 201);
  });

  r.delete('/policy/shadow', async (req, res) => {
    const auth = authOf(req);
    reply(res, shadowReportResponse, presentShadow(await d.policy.discardShadow({ tenant_id: auth.tenantId, actor: deciderOf(auth), override_failing_tests: undefined })));
  });

  r.post('/policy/shadow/promote', async (req, res) => {
    const auth = authOf(req);
    const b = parseWith(shadowPromoteSchema, req.body ?? {}, 'body');
    const p = await d.policy.promoteShadow({ tenant_id: auth.tenantId, actor: deciderOf(auth), override_failing_tests: b.override_failing_tests });
    reply(res, promotedResponse, { policy_template: p.policy_template, bundle_revision: p.bundle?.revision ?? '', activated_at: p.bundle?.activated_at || null });
  });

  r.put('/policy/bundle-source', async (req, res) => {
    const auth = authOf(req);
    const b = parseWith(bundleSourceSchema, req.body, 'body');
    const s = await d.policy.setBundleSource({
      tenant_id: auth.tenantId,
      url: b.url,
      public_key: b.public_key,
      scope: b.scope ?? '',
      activation: b.activation,
      shadow_max_calls: b.shadow_max_calls ?? 0,
      shadow_seconds: b.shadow_duration_seconds ?? 0,
      actor: deciderOf(auth),
    });
    reply(res, bundleSourceResponse, presentSource(s));
  });
  r.get('/policy/bundle-source', async (req, res) => {
    reply(res, bundleSourceResponse, presentSource(await d.policy.getBundleSource({ tenant_id: authOf(req).tenantId })));
  });
  r.delete('/policy/bundle-source', async (req, res) => {
    reply(res, bundleSourceResponse, presentSource(await d.policy.deleteBundleSource({ tenant_id: authOf(req).tenantId })));
  });
  r.post('/policy/bundle-source/poll', async (req, res) => {
    reply(res, bundleSourceResponse, presentSource(await d.policy.pollBundleSource({ tenant_id: authOf(req).tenantId })));
  });

  r.get('/agents/:agent_id/anomaly_score', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const a = await d.policy.getAnomalyScore({ tenant_id: tenantId, agent_id: agentId });
    reply(res, anomalyResponse, { agent_id: agentId, anomaly_score: a.anomaly_score, factors: anomalyFactorValues(a.factors), updated_at: a.updated_at || null });
  });

  r.delete('/agents/:agent_id/history', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const c = await d.policy.clearAgentHistory({ tenant_id: tenantId, agent_id: agentId });
    reply(res, clearedResponse, { agent_id: agentId, cleared: c.cleared, keys_removed: c.keys_removed, anomaly_score_kept: false });
  });

  r.delete('/agents/:agent_id/counters', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const c = await d.policy.clearAgentCounters({ tenant_id: tenantId, agent_id: agentId });
    reply(res, clearedResponse, { agent_id: agentId, cleared: c.cleared, keys_removed: c.keys_removed, anomaly_score_kept: true });
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
  '/policy/shadow': {
    get: { summary: "The tenant's running shadow (or its last one): counts by live → candidate decision, the rules behind the differences, samples linked to their records", responses: { 200: response('the shadow report', shadowReportResponse) } },
    put: {
      summary: 'Put a candidate policy in shadow: every governed call is also decided by it, off the answer’s path, until max_calls or the expiry',
      requestBody: jsonBody(shadowStartSchema),
      responses: {
        201: response('the shadow, running', shadowReportResponse),
        409: errors[409]('a shadow runs already: promote or discard it first'),
        422: errors[422]('a bad candidate (as PATCH /dashboard/settings would refuse it) or bounds out of range'),
      },
    },
    delete: { summary: 'Discard the running shadow (the live policy stays)', responses: { 200: response('the shadow, discarded', shadowReportResponse), 404: errors[404]('no shadow runs') } },
  },
  '/policy/shadow/promote': {
    post: {
      summary: 'Make the running shadow’s candidate the live policy (a new revision), through the same checks as any policy change, tests gate included',
      requestBody: optionalJsonBody(shadowPromoteSchema),
      responses: {
        200: response('the policy now in force', promotedResponse),
        404: errors[404]('no shadow runs'),
        422: errors[422]("the candidate's tests fail (one detail per test) and no override_failing_tests was given"),
      },
    },
  },
  '/policy/bundle-source': {
    put: {
      summary: "Point the policy at the tenant's OPA bundle server: the signed bundle is polled with its ETag, verified, tested, and activated (or put in shadow); it is polled at once",
      requestBody: jsonBody(bundleSourceSchema),
      responses: { 200: response('the source, with the outcome of its first poll', bundleSourceResponse), 422: errors[422]('not an HTTPS URL, not a PEM public key') },
    },
    get: { summary: "The tenant's OPA bundle source and its last poll", responses: { 200: response('the source', bundleSourceResponse), 404: errors[404]('no source registered') } },
    delete: { summary: 'Stop polling the bundle source (the live policy stays)', responses: { 200: response('the source removed', bundleSourceResponse), 404: errors[404]('no source registered') } },
  },
  '/policy/bundle-source/poll': {
    post: { summary: 'Poll the bundle source now (a CI job after publishing)', responses: { 200: response('the source, with the outcome of this poll', bundleSourceResponse), 404: errors[404]('no source registered') } },
  },
  '/agents/{agent_id}/anomaly_score': { get: { summary: 'Current anomaly score of an agent (0-1) and its factors', parameters: agentPath, responses: { 200: response('score', anomalyResponse), 404: unknownAgent } } },
  '/agents/{agent_id}/history': { delete: { summary: 'Clear the behavioral history of an agent (counters and anomaly score)', parameters: agentPath, responses: { 200: response('cleared', clearedResponse), 404: unknownAgent } } },
  '/agents/{agent_id}/counters': { delete: { summary: 'Clear the counters and actions of an agent, keeping its anomaly score', parameters: agentPath, responses: { 200: response('cleared', clearedResponse), 404: unknownAgent } } },
});
