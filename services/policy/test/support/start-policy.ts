/**
 * The policy service's own definition (policy.service.ts, as main.ts runs it) started in this process against
 * the real Postgres, Redis and NATS on a free gRPC port, with a client of its PolicyService. The shadows'
 * evaluation thread runs the service's build (dist/shadow/shadow-worker.js: jest runs the sources). Tests name
 * what they put in place (`overrides`: the policy change recorder) and the settings they need (`env`).
 */
import path from 'node:path';
import { policy as pb } from '@agw/proto';
import { type PromiseClient, type StartedService, type TestServiceOptions, createClient, startTestService } from '@agw/shared';
import type { PolicyConfig } from '../../src/config';
import { type PolicyApi, type PolicyOverrides, policyService } from '../../src/policy.service';
import { workerCandidateEvaluator } from '../../src/shadow/shadow-evaluator';

/** The template folder of the sources (the service's default). */
export const TEMPLATES = path.resolve(__dirname, '../../templates');
/** The compiled shadow worker (the evaluation thread runs JavaScript). */
export const SHADOW_WORKER = path.resolve(__dirname, '../../dist/shadow/shadow-worker.js');

/** The started service and a client of its PolicyService. */
export type StartedPolicy = StartedService<PolicyConfig, PolicyApi> & { client: PromiseClient<typeof pb.PolicyServiceService> };

export function startPolicy(o: TestServiceOptions<PolicyConfig, PolicyOverrides> = {}): Promise<StartedPolicy> {
  return startTestService(policyService(), {
    ...o,
    // no OPA bundle source of the shared test database falls due while a test runs
    env: { POLICY_TEMPLATES_DIR: TEMPLATES, POLICY_BUNDLE_POLL_MS: '3600000', ...o.env },
    overrides: { ...o.overrides, evaluator: o.overrides?.evaluator ?? workerCandidateEvaluator(o.env?.POLICY_TEMPLATES_DIR ?? TEMPLATES, SHADOW_WORKER) },
    clients: (address) => ({ client: createClient(pb.PolicyServiceClient, address, 'policy engine') }),
  });
}
