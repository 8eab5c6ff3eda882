/** gRPC adapter of the policy service: translate messages, call the domain, nothing else. */
import { policy as pb } from '@agw/proto';
import { type AnomalyFactorValues, type GrpcServiceBinding, InputError, type Logger, NotFoundError, anomalyFactorsMessage, implement } from '@agw/shared';
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
    tenantId: s.tenant_id,
    url: s.url,
    scope: s.scope ?? '',
    activation: s.activation,
    shadowMaxCalls: s.shadow_max_calls ?? 0,
    shadowSeconds: s.shadow_seconds ?? 0,
    etag: s.etag ?? '',
    lastPolledAt: s.last_polled_at?.toISOString() ?? '',
    lastOutcome: s.last_outcome ?? '',
    lastDetail: s.last_detail ?? '',
    revision: s.revision ?? '',
    digest: s.digest ?? '',
    createdBy: s.created_by,
    createdAt: s.created_at.toISOString(),
    pollOutcome,
  };
}

function policyChange(req: pb.SetTenantPolicyRequest) {
  return {
    template: req.policyTemplate || undefined,
    configJson: req.hasPolicyConfig ? req.policyConfigJson || '{}' : undefined,
    customPolicy: req.hasCustomPolicy ? req.customPolicy : undefined,
  };
}

function overrideOf(o: pb.PolicyOverride | undefined): { note: string } | undefined {
  return o ? { note: o.note } : undefined;
}

export function shadowReport(tenantId: string, r: ShadowReport): pb.ShadowReport {
  const s = r.shadow;
  const f = r.figures;
  return {
    tenantId,
    status: r.status,
    shadowId: s?.shadow_id ?? '',
    policyTemplate: s?.policy_template ?? '',
    revision: s?.revision ?? '',
    startedBy: s?.started_by ?? '',
    startedAt: s?.started_at.toISOString() ?? '',
    expiresAt: s?.expires_at.toISOString() ?? '',
    maxCalls: s?.max_calls ?? 0,
    calls: s?.calls ?? 0,
    differing: f?.differing ?? 0,
    dropped: s?.dropped ?? 0,
    endedAt: s?.ended_at?.toISOString() ?? '',
    endReason: s?.end_reason ?? '',
    transitions: f?.transitions ?? [],
    rules: f?.rules ?? [],
    samples: (f?.samples ?? []).map((x) => ({
      actionId: x.action_id,
      agentId: x.agent_id,
      tool: x.tool,
      liveDecision: x.live_decision,
      liveViolations: x.live_violations,
      candidateDecision: x.candidate_decision,
      candidateViolations: x.candidate_violations,
      liveEvalMs: x.live_eval_ms,
      candidateEvalMs: x.candidate_eval_ms,
      decidedAt: x.decided_at.toISOString(),
    })),
    liveEvalMsAvg: f?.liveEvalMsAvg ?? 0,
    candidateEvalMsAvg: f?.candidateEvalMsAvg ?? 0,
    candidateEvalMsMax: f?.candidateEvalMsMax ?? 0,
    liveRevision: r.liveRevision,
  };
}

function parseObject(text: string, field: string): Record<string, unknown> {
  if (!text) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw InputError.at([field], 'must be JSON', 'json_invalid');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw InputError.at([field], 'must be a JSON object', 'object_type');
  return v as Record<string, unknown>;
}

function required(value: string, field: string): string {
  if (!value) throw InputError.at([field], `${field} is required`, 'missing');
  return value;
}

export function bundleStatus(b: ActiveBundle): pb.BundleStatus {
  return { tenantId: b.tenantId, revision: b.revision, hash: b.hash, policyTemplate: b.template, activatedAt: b.activatedAt };
}

export function tenantPolicy(b: ActiveBundle): pb.TenantPolicy {
  return {
    tenantId: b.tenantId,
    policyTemplate: b.template,
    policyConfigJson: JSON.stringify(b.config),
    customPolicy: b.customPolicy ?? '',
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
    const params = parseObject(c.paramsJson, 'call.params_json');
    // replay keeps what the stores keep; plaintext params with PII are never stored
    if (!req.storedParamsJson && c.piiDetected) throw InputError.at(['stored_params_json'], 'stored_params_json is required when pii_detected is true', 'missing');
    if (req.storedParamsJson) parseObject(req.storedParamsJson, 'stored_params_json');
    const r = await d.evaluation.evaluate(required(req.tenantId, 'tenant_id'), required(req.actionId, 'action_id'), toolCallFacts(c, params), req.storedParamsJson || c.paramsJson || '{}');
    return {
      decision: r.decision,
      violations: r.violations,
      severity: r.severity,
      alertTier: r.alertTier,
      requiresHuman: r.requiresHuman,
      requiredApprovers: r.requiredApprovers,
      bundleRevision: r.bundleRevision,
      evalMs: r.evalMs,
      passes: r.passes,
      decisionInput: r.input,
    };
  };
  return {
    definition: pb.PolicyServiceService,
    implementation: implement(
      pb.PolicyServiceService,
      {
        evaluate,
        evaluateStream: evaluate,
        getBundleStatus: async (req) => bundleStatus(await d.policies.active(required(req.tenantId, 'tenant_id'))),
        setTenantPolicy: async (req) =>
          tenantPolicy(
            await d.policies.set(required(req.tenantId, 'tenant_id'), policyChange(req), {
              actor: req.actor || `api_key:${req.tenantId}`,
              overrideFailingTests: overrideOf(req.overrideFailingTests),
            }),
          ),
        startShadow: async (req) => {
          const tenantId = required(req.tenantId, 'tenant_id');
          if (!req.candidate) throw InputError.at(['candidate'], 'candidate is required', 'missing');
          return shadowReport(tenantId, await d.shadows.start(tenantId, policyChange(req.candidate), { maxCalls: req.maxCalls, durationSeconds: req.durationSeconds }, req.actor || `api_key:${tenantId}`));
        },
        getShadow: async (req) => shadowReport(req.tenantId, await d.shadows.report(required(req.tenantId, 'tenant_id'))),
        discardShadow: async (req) => shadowReport(req.tenantId, await d.shadows.discard(required(req.tenantId, 'tenant_id'), req.actor || `api_key:${req.tenantId}`)),
        setBundleSource: async (req) => {
          const tenantId = required(req.tenantId, 'tenant_id');
          if (req.activation !== 'direct' && req.activation !== 'shadow') throw InputError.at(['activation'], 'activation is direct or shadow', 'enum');
          const { source, outcome } = await sources().register(
            tenantId,
            { url: req.url, publicKeyPem: req.publicKey, scope: req.scope, activation: req.activation, shadowMaxCalls: req.shadowMaxCalls || undefined, shadowSeconds: req.shadowSeconds || undefined },
            req.actor || `api_key:${tenantId}`,
          );
          return bundleSourceMessage(source, outcome);
        },
        getBundleSource: async (req) => {
          const s = await sources().get(required(req.tenantId, 'tenant_id'));
          if (!s) throw new NotFoundError('No bundle source is registered (PUT /api/policy/bundle-source)');
          return bundleSourceMessage(s);
        },
        deleteBundleSource: async (req) => {
          const tenantId = required(req.tenantId, 'tenant_id');
          const s = await sources().get(tenantId);
          await sources().remove(tenantId);
          return bundleSourceMessage(s!);
        },
        pollBundleSource: async (req) => {
          const tenantId = required(req.tenantId, 'tenant_id');
          const outcome = await sources().pollNow(tenantId);
          return bundleSourceMessage((await sources().get(tenantId))!, outcome);
        },
        promoteShadow: async (req) => tenantPolicy(await d.shadows.promote(required(req.tenantId, 'tenant_id'), req.actor || `api_key:${req.tenantId}`, overrideOf(req.overrideFailingTests))),
        testPolicy: async (req) => {
          required(req.tenantId, 'tenant_id');
          compileCustom(req.customPolicy); // 422 at custom_policy, as a save would be
          const run = runTests([{ name: CUSTOM_FILE, source: req.customPolicy }]);
          const cov = run.coverage!;
          return {
            results: run.results.map((r) => ({ name: r.name, file: r.file, row: r.row, outcome: r.outcome, error: r.error ?? '', durationMs: r.durationMs })),
            passed: run.passed,
            failed: run.failed,
            errored: run.errored,
            coveragePercent: cov.percent,
            coveredLines: cov.covered,
            coverableLines: cov.coverable,
            coverageFiles: cov.files.map((f) => ({ file: f.file, percent: f.percent, notCovered: f.notCovered })),
          };
        },
        getTenantPolicy: async (req) => tenantPolicy(await d.policies.active(required(req.tenantId, 'tenant_id'))),
        listTemplates: async () => ({
          templates: d.catalog.list().map((t) => ({
            name: t.name,
            description: t.description,
            parameters: t.parameters.map((p) => ({ name: p.name, type: p.type, defaultJson: JSON.stringify(p.default), description: p.description })),
          })),
        }),
        listRules: async (req) => {
          const b = await d.policies.active(required(req.tenantId, 'tenant_id'));
          return { policyTemplate: b.template, bundleRevision: b.revision, rules: b.rules().map((r) => ({ id: r.id, trigger: r.trigger, severity: r.severity, kind: r.kind })) };
        },
        replay: async (req) => ({
          results: (
            await d.replay.replay(
              required(req.tenantId, 'tenant_id'),
              req.actionIds,
              req.candidate
                ? {
                    template: req.candidate.policyTemplate || undefined,
                    configJson: req.candidate.hasPolicyConfig ? req.candidate.policyConfigJson || '{}' : undefined,
                    customPolicy: req.candidate.hasCustomPolicy ? req.candidate.customPolicy : undefined,
                  }
                : undefined,
            )
          ).map((r) => ({
            actionId: r.action_id,
            found: r.found,
            originalDecision: r.original_decision,
            replayDecision: r.replay_decision,
            consistent: r.consistent,
            originalViolations: r.original_violations,
            replayViolations: r.replay_violations,
            originalBundleRevision: r.original_bundle_revision,
            replayBundleRevision: r.replay_bundle_revision,
            tool: r.tool,
            erasedSubjects: r.erased_subjects,
          })),
        }),
        getAnomalyScore: async (req) => {
          const a = await d.behavior.anomaly(required(req.tenantId, 'tenant_id'), required(req.agentId, 'agent_id'));
          return { agentId: req.agentId, anomalyScore: a.score, factors: 'burst' in a.factors ? anomalyFactorsMessage(a.factors as AnomalyFactorValues) : undefined, updatedAt: a.updatedAt };
        },
        clearAgentHistory: async (req) => {
          const n = await d.behavior.clear(required(req.tenantId, 'tenant_id'), required(req.agentId, 'agent_id'), false);
          return { agentId: req.agentId, cleared: true, keysRemoved: n };
        },
        clearAgentCounters: async (req) => {
          const n = await d.behavior.clear(required(req.tenantId, 'tenant_id'), required(req.agentId, 'agent_id'), true);
          return { agentId: req.agentId, cleared: true, keysRemoved: n };
        },
      },
      logger,
    ),
  };
}
