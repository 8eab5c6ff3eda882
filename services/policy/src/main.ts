/** Composition root of the policy service: templates, stores, evaluation, replay, gRPC. No logic here. */
import '@agw/shared/dist/tracing/register'; // first: traces (when configured) instrument what the imports below load
import { Counter, Histogram, runService } from '@agw/shared';
import { BehaviorStore } from './behavior/behavior-store';
import { sharedTenantPolicies } from './bundles/policy-changes';
import { TenantPolicyRepository } from './bundles/tenant-policy.repository';
import { loadPolicyConfig } from './config';
import { PolicyEvaluation } from './decisions/policy-evaluation';
import { policyGrpcService } from './grpc/policy.grpc';
import { auditDecisionInputs } from './replay/audit-decision-inputs';
import { ReplayService } from './replay/replay.service';
import { vaultRevealer } from './replay/vault-revealer';
import { TemplateCatalog } from './templates/template-catalog';

runService({
  name: 'policy',
  loadConfig: loadPolicyConfig,
  start: async ({ config, logger, registry, postgres, redis, nats, peers }) => {
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
    const policies = sharedTenantPolicies(new TenantPolicyRepository(db), catalog, logger, bus, config.policyCacheMs);
    const behavior = new BehaviorStore(redis());
    const recordFailures = new Counter({
      name: 'agw_policy_behavior_record_failures_total',
      help: 'decisions whose behavioral record failed after the answer (pass 2 does not wait for it): their counters did not move',
      registers: [registry],
    });
    const evaluation = new PolicyEvaluation(
      policies,
      behavior,
      (ms, passes) => evalMs.observe({ passes: String(passes) }, ms),
      (e) => {
        recordFailures.inc();
        logger.warn({ reason: (e as Error).message }, 'behavioral record failed after the answer');
      },
    );
    const replay = new ReplayService(policies, auditDecisionInputs(auditClient), vaultRevealer(vaultClient));
    return {
      grpc: [policyGrpcService({ catalog, policies, evaluation, replay, behavior }, logger)],
      info: { templates: catalog.list().map((t) => t.name) },
    };
  },
});
