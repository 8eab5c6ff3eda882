/** The gateway's gRPC clients, built once in main.ts. */
import { audit, policy } from '@agw/proto';
import { type PromiseClient, createClient } from '@agw/shared';
import type { GatewayConfig } from '../config';

export type PolicyClient = PromiseClient<typeof policy.PolicyServiceService>;
export type AuditClient = PromiseClient<typeof audit.AuditServiceService>;

export function createPolicyClient(config: GatewayConfig): PolicyClient {
  return createClient(policy.PolicyServiceClient, config.policyGrpcUrl, 'policy engine', { deadlineMs: config.policyDeadlineMs });
}

export function createAuditClient(config: GatewayConfig): AuditClient {
  return createClient(audit.AuditServiceClient, config.auditGrpcUrl, 'audit service', { deadlineMs: 10_000 });
}
