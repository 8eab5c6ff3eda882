/** The types of the managed service's gRPC clients (audit, policy, vault); main.ts gets them from runService (`ctx.peers`). */
import type { PeerClient } from '@agw/shared';

export type AuditClient = PeerClient<'audit'>;
export type PolicyClient = PeerClient<'policy'>;
export type VaultClient = PeerClient<'vault'>;
