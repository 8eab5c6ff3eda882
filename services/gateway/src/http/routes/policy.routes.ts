/**
 * Policy endpoints: templates, the caller's active rules, bundle status, replay, and agent behavior
 * (anomaly score, clearing history/counters). Everything is answered by the policy service.
 */
import type { policy } from '@agw/proto';
import { NotFoundError } from '@agw/shared';
import { Router } from 'express';
import { z } from 'zod';
import type { GatewayDeps } from '../../deps';
import { addPaths } from '../../openapi/openapi';
import { isUuid } from '../params';
import { authOf } from '../request-context';
import { parseWith } from '../validation';

const uuid = z.string().refine(isUuid, 'must be a UUID (an action_id returned by POST /mcp/tools/call)');
export const replaySchema = z.object({ action_id: uuid }).strict();
export const replayBulkSchema = z.object({ action_ids: z.array(uuid).min(1).max(1000) }).strict();

const AGENT_ID = /^[a-zA-Z0-9._-]{1,256}$/;
function agentParam(value: string | undefined): string {
  if (!value || !AGENT_ID.test(value)) throw new NotFoundError('Agent not found');
  return value;
}

function presentReplay(r: policy.ReplayResult) {
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
  return { revision: b.revision, hash: b.hash, hash_algorithm: 'sha256', policy_template: b.policyTemplate, activated_at: b.activatedAt || null };
}

export function policyRoutes(d: GatewayDeps): Router {
  const r = Router();

  r.get('/policy/templates', async (_req, res) => {
    const { templates } = await d.policy.listTemplates({});
    res.json({
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
    res.json({ policy_template: out.policyTemplate, bundle_revision: out.bundleRevision, rules: out.rules.map((x) => ({ id: x.id, kind: x.kind, trigger: x.trigger, severity: x.severity })) });
  });

  r.get('/bundles/gateway/status', async (req, res) => {
    const { tenantId } = authOf(req);
    res.json({ bundle: 'gateway', ...presentBundle(await d.policy.getBundleStatus({ tenantId })) });
  });

  r.post('/audit/replay', async (req, res) => {
    const { tenantId } = authOf(req);
    const { action_id } = parseWith(replaySchema, req.body, 'body');
    const [result] = (await d.policy.replay({ tenantId, actionIds: [action_id.toLowerCase()] })).results;
    if (!result?.found) throw new NotFoundError('Action not found (or decided before the policy: gateway constraint or failure mode)');
    res.json(presentReplay(result));
  });

  r.post('/audit/replay-bulk', async (req, res) => {
    const { tenantId } = authOf(req);
    const { action_ids } = parseWith(replayBulkSchema, req.body, 'body');
    const { results } = await d.policy.replay({ tenantId, actionIds: action_ids.map((a) => a.toLowerCase()) });
    const found = results.filter((x) => x.found);
    res.json({
      total: results.length,
      replayed: found.length,
      consistent_count: found.filter((x) => x.consistent).length,
      changed_count: found.filter((x) => !x.consistent).length,
      not_found: results.filter((x) => !x.found).map((x) => x.actionId),
      results: found.map(presentReplay),
    });
  });

  r.get('/agents/:agent_id/anomaly_score', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const a = await d.policy.getAnomalyScore({ tenantId, agentId });
    res.json({ agent_id: agentId, anomaly_score: a.anomalyScore, factors: JSON.parse(a.factorsJson || '{}'), updated_at: a.updatedAt || null });
  });

  r.delete('/agents/:agent_id/history', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const c = await d.policy.clearAgentHistory({ tenantId, agentId });
    res.json({ agent_id: agentId, cleared: c.cleared, keys_removed: c.keysRemoved, anomaly_score_kept: false });
  });

  r.delete('/agents/:agent_id/counters', async (req, res) => {
    const { tenantId } = authOf(req);
    const agentId = agentParam(req.params.agent_id);
    const c = await d.policy.clearAgentCounters({ tenantId, agentId });
    res.json({ agent_id: agentId, cleared: c.cleared, keys_removed: c.keysRemoved, anomaly_score_kept: true });
  });

  return r;
}

const ok = (description: string) => ({ description });
const json = (schema: z.ZodType) => ({ 'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) } });
const agentPath = [{ name: 'agent_id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-zA-Z0-9._-]+$', maxLength: 256 } }];

addPaths({
  '/policy/templates': {
    get: {
      summary: 'Policy templates with their parameters, types and defaults',
      responses: { 200: ok('{templates: [{name, description, parameters: [{name, type, default, description}]}]}') },
    },
  },
  '/policy/rules': {
    get: {
      summary: "The active rules of the caller's policy",
      responses: { 200: ok('{policy_template, bundle_revision, rules: [{id, kind (violation|approval), trigger, severity}]}') },
    },
  },
  '/bundles/gateway/status': {
    get: { summary: 'Current policy bundle revision and hash', responses: { 200: ok('{bundle, revision, hash, hash_algorithm, policy_template, activated_at}') } },
  },
  '/audit/replay': {
    post: {
      summary: 'Re-evaluate a stored action under the current policy',
      requestBody: { required: true, content: json(replaySchema) },
      responses: {
        200: ok('{action_id, tool, original_decision, replay_decision, consistent, original_violations, replay_violations, original_bundle_revision, replay_bundle_revision}'),
        404: ok('unknown action (or one decided before the policy)'),
        422: ok('validation error'),
      },
    },
  },
  '/audit/replay-bulk': {
    post: {
      summary: 'Re-evaluate up to 1000 stored actions under the current policy',
      requestBody: { required: true, content: json(replayBulkSchema) },
      responses: { 200: ok('{total, replayed, consistent_count, changed_count, not_found: [action_id], results: [replay result]}'), 422: ok('validation error') },
    },
  },
  '/agents/{agent_id}/anomaly_score': {
    get: { summary: 'Current anomaly score of an agent (0-1) and its factors', parameters: agentPath, responses: { 200: ok('{agent_id, anomaly_score, factors, updated_at}') } },
  },
  '/agents/{agent_id}/history': {
    delete: { summary: 'Clear the behavioral history of an agent (counters and anomaly score)', parameters: agentPath, responses: { 200: ok('{agent_id, cleared, keys_removed, anomaly_score_kept: false}') } },
  },
  '/agents/{agent_id}/counters': {
    delete: { summary: 'Clear the counters and actions of an agent, keeping its anomaly score', parameters: agentPath, responses: { 200: ok('{agent_id, cleared, keys_removed, anomaly_score_kept: true}') } },
  },
});
