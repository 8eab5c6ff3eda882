/** The types of the gateway's gRPC clients; the clients themselves come from runService (`ctx.peers`, @agw/shared `createPeerClients`). */
import type { PeerClient } from '@agw/shared';

export type PolicyClient = PeerClient<'policy'>;
export type AuditClient = PeerClient<'audit'>;
export type WebhookClient = PeerClient<'webhook'>;
export type VaultClient = PeerClient<'vault'>;
/** Merkle tree heads and proofs (audit service); a triggered build may wait for a running one. */
export type MerkleClient = PeerClient<'merkle'>;
/** The audit part of the compliance export (audit service). */
export type ComplianceClient = PeerClient<'compliance'>;
/** Anchoring; a trigger waits for its transaction's receipt. */
export type AnchorClient = PeerClient<'anchor'>;
/** Federation of upstream MCP servers (served by the vault process, docs/federation.md). */
export type FederationClient = PeerClient<'federation'>;
/** Managed agents and sessions; creating a session waits for the external platform. */
export type ManagedClient = PeerClient<'managed'>;
