/**
 * The policy service's definition: templates, tenant policies and their change feed, evaluation, shadows, OPA
 * bundle sources, replay and the gRPC binding. main.ts runs it; integration tests start the same definition
 * in-process (`startService(policyService(), { config, overrides })`, test/support/start-policy.ts).
 */
import { Counter, type Db, Histogram, internalCidrsAllowed, onTenantChange, publishTenantChange, type ServiceDefinition } from '@agw/shared';
import { BehaviorStore } from './behavior/behavior-store';
import { sharedTenantPolicies } from './bundles/policy-changes';
import { TenantPolicyRepository } from './bundles/tenant-policy.repository';
import { type PolicyChangeRecorder, auditPolicyChangeRecorder } from './changes/policy-change-recorder';
import { type PolicyConfig, loadPolicyConfig } from './config';
import { PolicyEvaluation } from './decisions/policy-evaluation';
import { policyGrpcService } from './grpc/policy.grpc';
import { auditDecisionInputs } from './replay/audit-decision-inputs';
import { ReplayService } from './replay/replay.service';
import { PolicyShadows } from './shadow/policy-shadows';
import { type CandidateEvaluator, workerCandidateEvaluator } from './shadow/shadow-evaluator';
import { ShadowRepository } from './shadow/shadow.repository';
import { AddressPolicy, caFileContext, createPinnedFetch } from '@agw/egress';
import { BundleSourceRepository } from './opa-bundles/bundle-source.repository';
import { BundleSources } from './opa-bundles/bundle-sources';
import { vaultRevealer } from './replay/vault-revealer';
import { TemplateCatalog } from './templates/template-catalog';
import type { TenantPolicies } from './bundles/tenant-policies';

/** What an in-process test reaches into. */
export interface PolicyApi {
  /** the service's pool (a test reads what was kept) */
  db: Db;
  /** the tenants' policies (shared with every replica over NATS) */
  policies: TenantPolicies;
  /** the decision of one governed call (both passes, the behavioral record, the shadows' queue) */
  evaluation: PolicyEvaluation;
  shadows: PolicyShadows;
}

/**
 * What a test may put in place: where policy changes are recorded (default: the audit service, over gRPC),
 * and the shadows' candidate evaluator (default: the evaluation thread of the compiled shadow worker next to
 * this module; a test running the sources names the built one). The service closes the evaluator it uses.
 */
export interface PolicyOverrides {
  recorder: PolicyChangeRecorder;
  evaluator: CandidateEvaluator;
}

export const policyService = (): ServiceDefinition<PolicyConfig, PolicyApi, PolicyOverrides> => ({
  name: 'policy',
  loadConfig: loadPolicyConfig,
  start: async ({ config, logger, registry, postgres, redis, nats, peers, overrides }) => {
    const catalog = await TemplateCatalog.load(config.templatesDir);
    const db = await postgres();
    const { vault: vaultClient, audit: auditClient } = peers(['vault', 'audit']);
    const evalMs = new Histogram({
      name: 'agw_policy_evaluation_ms',
      help: 'Rego evaluation time of one call (both passes and enrichment), ms',
      labelNames: ['passes'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50],
      registers: [registry],
    });
    // policy changes reach every replica's cache over NATS; a NATS outage does not make this service unready
    const bus = await nats({ readiness: false });
    const recorder = overrides.recorder ?? auditPolicyChangeRecorder(auditClient, logger);
    const policies = sharedTenantPolicies(new TenantPolicyRepository(db), catalog, logger, bus, config.policyCacheMs, recorder);
    const behavior = new BehaviorStore(redis());
    const recordFailures = new Counter({
      name: 'agw_policy_behavior_record_failures_total',
      help: 'decisions whose behavioral record failed after the answer (pass 2 does not wait for it): their counters did not move',
      registers: [registry],
    });
    const shadowDropped = new Counter({ name: 'agw_policy_shadow_dropped_total', help: 'governed calls not shadowed because the shadow queue was full', registers: [registry] });
    const shadowFailures = new Counter({ name: 'agw_policy_shadow_failures_total', help: 'shadow batches that failed after the answer (evaluation or storing)', registers: [registry] });
    const evaluator = overrides.evaluator ?? workerCandidateEvaluator(config.templatesDir);
    const shadows = new PolicyShadows(new ShadowRepository(db), policies, recorder, evaluator, logger, {
      queueMax: config.shadowQueueMax,
      batch: config.shadowBatch,
      flushMs: config.shadowFlushMs,
      cacheMs: config.policyCacheMs,
      onChanged: (tenantId) => publishTenantChange(bus, 'policy', tenantId),
      onDropped: (n) => shadowDropped.inc(n),
      onFailed: (e) => {
        shadowFailures.inc();
        logger.warn({ reason: (e as Error).message }, 'shadow batch failed after the answer');
      },
    });
    onTenantChange(bus, 'policy', (tenantId) => shadows.invalidate(tenantId));
    const evaluation = new PolicyEvaluation(
      policies,
      behavior,
      (ms, passes) => evalMs.observe({ passes: String(passes) }, ms),
      (e) => {
        recordFailures.inc();
        logger.warn({ reason: (e as Error).message }, 'behavioral record failed after the answer');
      },
      shadows,
    );
    // OPA bundle sources: fetched through the egress rules, polled by every replica (each poll claimed by one)
    const bundleFetch = createPinnedFetch({
      policy: new AddressPolicy({ allowCidrs: internalCidrsAllowed(config.bundleAllowCidrs, config.profile) }),
      maxResponseBytes: config.bundleMaxBytes,
      connectTimeoutMs: config.bundleTimeoutMs,
      headersTimeoutMs: config.bundleTimeoutMs,
      secureContext: caFileContext(config.bundleCaFile),
    });
    const bundleSources = new BundleSources(new BundleSourceRepository(db), policies, shadows, recorder, bundleFetch, logger, { maxBytes: config.bundleMaxBytes, pollMs: config.bundlePollMs });
    const pollTimer = setInterval(() => void bundleSources.pollDue().catch((e: unknown) => logger.warn({ reason: (e as Error).message }, 'bundle sweep failed')), Math.min(config.bundlePollMs, 10_000));
    pollTimer.unref();
    const replay = new ReplayService(policies, auditDecisionInputs(auditClient), vaultRevealer(vaultClient));
    return {
      grpc: [policyGrpcService({ catalog, policies, evaluation, replay, behavior, shadows, bundleSources }, logger)],
      // reverse order: the queued calls are decided and kept, then the evaluation thread ends
      closers: [() => evaluator.close(), () => shadows.idle(), () => bundleFetch.close(), () => clearInterval(pollTimer)],
      info: { templates: catalog.list().map((t) => t.name) },
      api: { db, policies, evaluation, shadows },
    };
  },
});
