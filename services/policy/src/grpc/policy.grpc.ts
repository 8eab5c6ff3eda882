/** gRPC adapter of the policy service: translate messages, call the domain, nothing else. */
import { policy as pb } from '@agw/proto';
import { type AnomalyFactorValues, type GrpcServiceBinding, InputError, type Logger, NotFoundError, anomalyFactorsMessage, bindService, jsonField, jsonOf, objectFromJson, requiredField } from '@agw/shared';
import { runTests } from '@agw/rego';
import type { BehaviorStore } from '../behavior/behavior-store';
import { CUSTOM_FILE, compileCustom } from '../bundles/policy-bundle';
import type { ActiveBundle, TenantPolicies } from '../bundles/tenant-policies';
import { type PolicyEvaluation, toolCallFacts } from '../decisions/policy-evaluation';
import type { ReplayService } from '../replay/replay.service';
import type { BundleSources } from '../opa-bundles/bundle-sources';
import type { StoredBundleSource } from '../opa-bundles/bundle-source.repository';
import type { PolicyShadows, ShadowReport } from '../shadow/policy-shadows';
import type { TemplateCatalog } from '../templates/template-catalog';

export interface PolicyDomain {
  catalog: TemplateCatalog;
  policies: TenantPolicies;
  evaluation: PolicyEvaluation;
  replay: ReplayService;
  behavior: BehaviorStore;
  shadows: PolicyShadows;
  /** absent: OPA bundle sources are not served (tests of other parts) */
  bundleSources?: BundleSources;
}

function bundleSourceMessage(s: StoredBundleSource, pollOutcome = ''): pb.BundleSource {
  return {
    tenant_id: s.tenant_id,
    url: s.url,
    scope: s.scope ?? '',
    activation: s.activation,
    shadow_max_calls: s.shadow_max_calls ?? 0,
    shadow_seconds: s.shadow_seconds ?? 0,
    etag: s.etag ?? '',
    last_polled_at: s.last_polled_at?.toISOString() ?? '',
    last_outcome: s.last_outcome ?? '',
    last_detail: s.last_detail ?? '',
    revision: s.revision ?? '',
    digest: s.digest ?? '',
    created_by: s.created_by,
    created_at: s.created_at.toISOString(),
    poll_outcome: pollOutcome,
  };
}

function policyChange(req: pb.SetTenantPolicyRequest) {
  return {
    template: req.policy_template || undefined,
    configJson: req.has_policy_config ? jsonOf(req, 'policy_config')?.text || '{}' : undefined,
    customPolicy: req.has_custom_policy ? req.custom_policy : undefined,
  };
}

function overrideOf(o: pb.PolicyOverride | undefined): { note: string } | undefined {
  return o ? { note: o.note } : undefined;
}

export function shadowReport(tenantId: string, r: ShadowReport): pb.ShadowReport {
  const s = r.shadow;
  const f = r.figures;
  return {
    tenant_id: tenantId,
    status: r.status,
    shadow_id: s?.shadow_id ?? '',
    policy_template: s?.policy_template ?? '',
    revision: s?.revision ?? '',
    started_by: s?.started_by ?? '',
    started_at: s?.started_at.toISOString() ?? '',
    expires_at: s?.expires_at.toISOString() ?? '',
    max_calls: s?.max_calls ?? 0,
    calls: s?.calls ?? 0,
    differing: f?.differing ?? 0,
    dropped: s?.dropped ?? 0,
    ended_at: s?.ended_at?.toISOString() ?? '',
    end_reason: s?.end_reason ?? '',
    transitions: f?.transitions ?? [],
    rules: f?.rules ?? [],
    samples: (f?.samples ?? []).map((x) => ({ ...x, decided_at: x.decided_at.toISOString() })),
    live_eval_ms_avg: f?.liveEvalMsAvg ?? 0,
    candidate_eval_ms_avg: f?.candidateEvalMsAvg ?? 0,
    candidate_eval_ms_max: f?.candidateEvalMsMax ?? 0,
    live_revision: r.liveRevision,
  };
}



export function bundleStatus(b: ActiveBundle): pb.BundleStatus {
  return { tenant_id: b.tenantId, revision: b.revision, hash: b.hash, policy_template: b.template, activated_at: b.activatedAt };
}

export function tenantPolicy(b: ActiveBundle): pb.TenantPolicy {
  return {
    tenant_id: b.tenantId,
    policy_template: b.template,
    ...jsonField('policy_config', b.config),
    custom_policy: b.customPolicy ?? '',
    bundle: bundleStatus(b),
  };
}

export function policyGrpcService(d: PolicyDomain, logger: Logger): GrpcServiceBinding {
  const sources = () => {
    if (!d.bundleSources) throw new NotFoundError('OPA bundle sources are not served here');
    return d.bundleSources;
  };
  const evaluate = async (req: pb.EvaluateRequest): Promise<pb.EvaluateResponse> => {
    const c = req.call;
    if (!c) throw InputError.at(['call'], 'call is required', 'missing');
    // the plaintext params, evaluated and never stored (the record carries the stored params to the audit service)
    const params = objectFromJson(jsonOf(c, 'params'), 'call.params');
    const r = await d.evaluation.evaluate(requiredField(req.tenant_id, 'tenant_id'), requiredField(req.action_id, 'action_id'), toolCallFacts(c, params));
    return {
      decision: r.decision,
      violations: r.violations,
      severity: r.severity,
      alert_tier: r.alertTier,
      requires_human: r.requiresHuman,
      required_approvers: r.requiredApprovers,
      bundle_revision: r.bundleRevision,
      eval_ms: r.evalMs,
      passes: r.passes,
      decision_facts: r.facts,
    };
  };
  return bindService(
    pb.PolicyServiceService,
    {
      evaluate,
      evaluateStream: evaluate,
      getBundleStatus: async (req) => bundleStatus(await d.policies.active(requiredField(req.tenant_id, 'tenant_id'))),
      setTenantPolicy: async (req) =>
        tenantPolicy(
          await d.policies.set(requiredField(req.tenant_id, 'tenant_id'), policyChange(req), {
            actor: req.actor || `api_key:${req.tenant_id}`,
            overrideFailingTests: overrideOf(req.override_failing_tests),
          }),
        ),
      startShadow: async (req) => {
        const tenantId = requiredField(req.tenant_id, 'tenant_id');
        if (!req.candidate) throw InputError.at(['candidate'], 'candidate is required', 'missing');
        return shadowReport(tenantId, await d.shadows.start(tenantId, policyChange(req.candidate), { maxCalls: req.max_calls, durationSeconds: req.duration_seconds }, req.actor || `api_key:${tenantId}`));
      },
      getShadow: async (req) => shadowReport(req.tenant_id, await d.shadows.report(requiredField(req.tenant_id, 'tenant_id'))),
      discardShadow: async (req) => shadowReport(req.tenant_id, await d.shadows.discard(requiredField(req.tenant_id, 'tenant_id'), req.actor || `api_key:${req.tenant_id}`)),
      setBundleSource: async (req) => {
        const tenantId = requiredField(req.tenant_id, 'tenant_id');
        if (req.activation !== 'direct' && req.activation !== 'shadow') throw InputError.at(['activation'], 'activation is direct or shadow', 'enum');
        const { source, outcome } = await sources().register(
          tenantId,
          { url: req.url, publicKeyPem: req.public_key, scope: req.scope, activation: req.activation, shadowMaxCalls: req.shadow_max_calls || undefined, shadowSeconds: req.shadow_seconds || undefined },
          req.actor || `api_key:${tenantId}`,
        );
        return bundleSourceMessage(source, outcome);
      },
      getBundleSource: async (req) => {
        const s = await sources().get(requiredField(req.tenant_id, 'tenant_id'));
        if (!s) throw new NotFoundError('No bundle source is registered (PUT /api/policy/bundle-source)');
        return bundleSourceMessage(s);
      },
      deleteBundleSource: async (req) => {
        const tenantId = requiredField(req.tenant_id, 'tenant_id');
        const s = await sources().get(tenantId);
        await sources().remove(tenantId);
        return bundleSourceMessage(s!);
      },
      pollBundleSource: async (req) => {
        const tenantId = requiredField(req.tenant_id, 'tenant_id');
        const outcome = await sources().pollNow(tenantId);
        return bundleSourceMessage((await sources().get(tenantId))!, outcome);
      },
      promoteShadow: async (req) => tenantPolicy(await d.shadows.promote(requiredField(req.tenant_id, 'tenant_id'), req.actor || `api_key:${req.tenant_id}`, overrideOf(req.override_failing_tests))),
      testPolicy: async (req) => {
        requiredField(req.tenant_id, 'tenant_id');
        compileCustom(req.custom_policy); // 422 at custom_policy, as a save would be
        const run = runTests([{ name: CUSTOM_FILE, source: req.custom_policy }]);
        const cov = run.coverage!;
        return {
          results: run.results.map((r) => ({ name: r.name, file: r.file, row: r.row, outcome: r.outcome, error: r.error ?? '', duration_ms: r.durationMs })),
          passed: run.passed,
          failed: run.failed,
          errored: run.errored,
          coverage_percent: cov.percent,
          covered_lines: cov.covered,
          coverable_lines: cov.coverable,
          coverage_files: cov.files.map((f) => ({ file: f.file, percent: f.percent, not_covered: f.notCovered })),
        };
      },
      getTenantPolicy: async (req) => tenantPolicy(await d.policies.active(requiredField(req.tenant_id, 'tenant_id'))),
      listTemplates: async () => ({
        templates: d.catalog.list().map((t) => ({
          name: t.name,
          description: t.description,
          parameters: t.parameters.map((p) => ({ name: p.name, type: p.type, ...jsonField('default', p.default), description: p.description })),
        })),
      }),
      listRules: async (req) => {
        const b = await d.policies.active(requiredField(req.tenant_id, 'tenant_id'));
        return { policy_template: b.template, bundle_revision: b.revision, rules: b.rules().map((r) => ({ id: r.id, trigger: r.trigger, severity: r.severity, kind: r.kind })) };
      },
      // a ReplayResult is the message, field for field
      replay: async (req) => ({
        results: await d.replay.replay(
          requiredField(req.tenant_id, 'tenant_id'),
          req.action_ids,
          req.candidate
            ? {
                template: req.candidate.policy_template || undefined,
                configJson: req.candidate.has_policy_config ? jsonOf(req.candidate, 'policy_config')?.text || '{}' : undefined,
                customPolicy: req.candidate.has_custom_policy ? req.candidate.custom_policy : undefined,
              }
            : undefined,
        ),
      }),
      getAnomalyScore: async (req) => {
        const a = await d.behavior.anomaly(requiredField(req.tenant_id, 'tenant_id'), requiredField(req.agent_id, 'agent_id'));
        return { agent_id: req.agent_id, anomaly_score: a.score, factors: 'burst' in a.factors ? anomalyFactorsMessage(a.factors as AnomalyFactorValues) : undefined, updated_at: a.updatedAt };
      },
      clearAgentHistory: async (req) => {
        const n = await d.behavior.clear(requiredField(req.tenant_id, 'tenant_id'), requiredField(req.agent_id, 'agent_id'), false);
        return { agent_id: req.agent_id, cleared: true, keys_removed: n };
      },
      clearAgentCounters: async (req) => {
        const n = await d.behavior.clear(requiredField(req.tenant_id, 'tenant_id'), requiredField(req.agent_id, 'agent_id'), true);
        return { agent_id: req.agent_id, cleared: true, keys_removed: n };
      },
    },
    logger,
  );
}
