/** The gateway's gRPC clients, built once in main.ts. */
import { audit, policy, vault } from '@agw/proto';
import { type PromiseClient, createClient } from '@agw/shared';
import type { GatewayConfig } from '../config';

export type PolicyClient = PromiseClient<typeof policy.PolicyServiceService>;
export type AuditClient = PromiseClient<typeof audit.AuditServiceService>;
export type VaultClient = PromiseClient<typeof vault.VaultServiceService>;

export function createPolicyClient(config: GatewayConfig): PolicyClient {
  return createClient(policy.PolicyServiceClient, config.policyGrpcUrl, 'policy engine', { deadlineMs: config.policyDeadlineMs });
}

export function createAuditClient(config: GatewayConfig): AuditClient {
  return createClient(audit.AuditServiceClient, config.auditGrpcUrl, 'audit service', { deadlineMs: 10_000 });
}

export function createVaultClient(config: GatewayConfig): VaultClient {
  return createClient(vault.VaultServiceClient, config.vaultGrpcUrl, 'vault service', { deadlineMs: 10_000 });
}
