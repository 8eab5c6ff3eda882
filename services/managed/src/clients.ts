/** The managed service's gRPC clients (audit, policy, vault), built once in main.ts. */
import { audit, policy, vault } from '@agw/proto';
import { type PromiseClient, createClient } from '@agw/shared';
import type { ManagedConfig } from './config';

export type AuditClient = PromiseClient<typeof audit.AuditServiceService>;
export type PolicyClient = PromiseClient<typeof policy.PolicyServiceService>;
export type VaultClient = PromiseClient<typeof vault.VaultServiceService>;

export function createClients(config: ManagedConfig): { audit: AuditClient; policy: PolicyClient; vault: VaultClient; close(): void } {
  const a = createClient(audit.AuditServiceClient, config.auditGrpcUrl, 'audit service', { deadlineMs: config.auditDeadlineMs });
  const p = createClient(policy.PolicyServiceClient, config.policyGrpcUrl, 'policy engine', { deadlineMs: config.policyDeadlineMs });
  const v = createClient(vault.VaultServiceClient, config.vaultGrpcUrl, 'vault service', { deadlineMs: config.vaultDeadlineMs });
  return {
    audit: a,
    policy: p,
    vault: v,
    close: () => {
      a.close();
      p.close();
      v.close();
    },
  };
}
