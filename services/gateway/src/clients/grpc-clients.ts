/** The gateway's gRPC clients, built once in main.ts. */
import { audit, policy, vault, webhook } from '@agw/proto';
import { anchor, federation, managed, merkle } from '@agw/proto';
import { type PromiseClient, createClient } from '@agw/shared';
import type { GatewayConfig } from '../config';

export type PolicyClient = PromiseClient<typeof policy.PolicyServiceService>;
export type AuditClient = PromiseClient<typeof audit.AuditServiceService>;
export type WebhookClient = PromiseClient<typeof webhook.WebhookServiceService>;
export type VaultClient = PromiseClient<typeof vault.VaultServiceService>;

export function createPolicyClient(config: GatewayConfig): PolicyClient {
  return createClient(policy.PolicyServiceClient, config.policyGrpcUrl, 'policy engine', { deadlineMs: config.policyDeadlineMs });
}

export function createAuditClient(config: GatewayConfig): AuditClient {
  return createClient(audit.AuditServiceClient, config.auditGrpcUrl, 'audit service', { deadlineMs: config.auditDeadlineMs });
}

export type MerkleClient = PromiseClient<typeof merkle.MerkleServiceService>;
export type ComplianceClient = PromiseClient<typeof merkle.ComplianceServiceService>;
export type AnchorClient = PromiseClient<typeof anchor.AnchorServiceService>;

/** Merkle tree heads and proofs (audit service); a triggered build may wait for a running one. */
export function createMerkleClient(config: GatewayConfig): MerkleClient {
  return createClient(merkle.MerkleServiceClient, config.auditGrpcUrl, 'audit service', { deadlineMs: config.merkleDeadlineMs });
}

export function createComplianceClient(config: GatewayConfig): ComplianceClient {
  return createClient(merkle.ComplianceServiceClient, config.auditGrpcUrl, 'audit service', { deadlineMs: config.merkleDeadlineMs });
}

/** Anchoring; a trigger waits for its transaction's receipt. */
export function createAnchorClient(config: GatewayConfig): AnchorClient {
  return createClient(anchor.AnchorServiceClient, config.anchorGrpcUrl, 'anchor service', { deadlineMs: config.anchorDeadlineMs });
}

/** Delivery log and test delivery; a test delivery waits for its first attempt (bounded by WEBHOOK_TIMEOUT_MS). */
export function createWebhookClient(config: GatewayConfig): WebhookClient {
  return createClient(webhook.WebhookServiceClient, config.webhookGrpcUrl, 'webhook service', { deadlineMs: config.webhookDeadlineMs });
}

export function createVaultClient(config: GatewayConfig): VaultClient {
  return createClient(vault.VaultServiceClient, config.vaultGrpcUrl, 'vault service', { deadlineMs: config.vaultDeadlineMs });
}

export type FederationClient = PromiseClient<typeof federation.FederationServiceService>;

/** Federation of upstream MCP servers (served by the vault process, docs/federation.md); a registration or refresh waits for the upstream's tools/list. */
export function createFederationClient(config: GatewayConfig): FederationClient {
  return createClient(federation.FederationServiceClient, config.vaultGrpcUrl, 'vault service', { deadlineMs: config.federationDeadlineMs });
}

export type ManagedClient = PromiseClient<typeof managed.ManagedServiceService>;

/** Managed agents and sessions; creating a session waits for the external platform (agent, vault, session). */
export function createManagedClient(config: GatewayConfig): ManagedClient {
  return createClient(managed.ManagedServiceClient, config.managedGrpcUrl, 'managed-session service', { deadlineMs: config.managedDeadlineMs });
}
