/**
 * The one place gRPC clients of other services are created. Each peer is known here once: its service
 * definition, the process that serves it (for error messages), the config setting of its address and the
 * config setting of its deadline. A service names the peers it calls; the clients read the service's own
 * config, so each keeps its configured deadlines; a method that takes longer than its peer's deadline says so
 * here (`methodDeadlineMs`) or where the clients are made (`methodDeadlines`), never at its call sites.
 *
 * @example
 * ```ts
 * const clients = createPeerClients(config, ['policy', 'audit']); // config.policyGrpcUrl, config.policyDeadlineMs, ...
 * await clients.policy.evaluate(...);
 * clients.close();
 * ```
 * A service whose config names one deadline for several peers passes it: `createPeerClients(config,
 * ['anchor', 'policy'], { deadlines: { anchor: config.peerDeadlineMs, policy: config.peerDeadlineMs } })`.
 * In a service, `ctx.peers(...)` of runService does the same and closes the clients at shutdown.
 */
import { anchor, audit, federation, managed, merkle, policy, vault, webhook } from '@agw/proto';
import { type PromiseClient, createClient } from './grpc';

/** Every peer: its client constructor, who serves it, and the config keys of its address and deadline. */
export const PEERS = {
  policy: { client: policy.PolicyServiceClient, peer: 'policy engine', address: 'policyGrpcUrl', deadline: 'policyDeadlineMs' },
  audit: { client: audit.AuditServiceClient, peer: 'audit service', address: 'auditGrpcUrl', deadline: 'auditDeadlineMs' },
  /** Merkle tree heads and proofs (audit service); a triggered build may wait for a running one */
  merkle: { client: merkle.MerkleServiceClient, peer: 'audit service', address: 'auditGrpcUrl', deadline: 'merkleDeadlineMs' },
  compliance: { client: merkle.ComplianceServiceClient, peer: 'audit service', address: 'auditGrpcUrl', deadline: 'merkleDeadlineMs' },
  /** anchoring; a trigger waits for its transaction's receipt */
  anchor: { client: anchor.AnchorServiceClient, peer: 'anchor service', address: 'anchorGrpcUrl', deadline: 'anchorDeadlineMs' },
  /** delivery log and test delivery; a test delivery waits for its first attempt */
  webhook: { client: webhook.WebhookServiceClient, peer: 'webhook service', address: 'webhookGrpcUrl', deadline: 'webhookDeadlineMs' },
  /** a brokered execution waits for the upstream: the vault's upstream timeouts (a federated upstream: up to 120 s plus connecting) plus headroom */
  vault: { client: vault.VaultServiceClient, peer: 'vault service', address: 'vaultGrpcUrl', deadline: 'vaultDeadlineMs', methodDeadlineMs: { execute: 135_000, executeStream: 135_000 } },
  /** checkpoint signing with the vault's HSM-held Ed25519 key */
  noteSigning: { client: vault.NoteSigningServiceClient, peer: 'vault service', address: 'vaultGrpcUrl', deadline: 'vaultDeadlineMs' },
  /** upstream MCP servers (served by the vault process); a registration waits for the upstream's tools/list */
  federation: { client: federation.FederationServiceClient, peer: 'vault service', address: 'vaultGrpcUrl', deadline: 'federationDeadlineMs' },
  /** managed agents and sessions; creating a session waits for the agent platform */
  managed: { client: managed.ManagedServiceClient, peer: 'managed-session service', address: 'managedGrpcUrl', deadline: 'managedDeadlineMs' },
} as const;

export type PeerName = keyof typeof PEERS;
/** The promise client of one peer. */
export type PeerClient<N extends PeerName> = PromiseClient<(typeof PEERS)[N]['client']['service']>;
/** The clients of the named peers, and one close for all of them. */
export type PeerClients<N extends PeerName> = { [K in N]: PeerClient<K> } & { close(): void };
/** What a config needs for these peers: each one's address setting (its deadline setting, unless passed). */
export type PeerConfig<N extends PeerName> = { [K in N as (typeof PEERS)[K]['address']]: string } & { [K in N as (typeof PEERS)[K]['deadline']]?: number };

/** The method names of one peer's service. */
export type PeerMethod<N extends PeerName> = keyof (typeof PEERS)[N]['client']['service'] & string;

export interface PeerClientOptions<N extends PeerName> {
  /** deadlines that do not come from the peer's own deadline setting (a config with one setting for several peers) */
  deadlines?: Partial<Record<N, number>>;
  /** deadlines of single methods that differ from their peer's (e.g. the health probes: HEALTH_PROBE_DEADLINE_MS) */
  methodDeadlines?: { [K in N]?: Partial<Record<PeerMethod<K>, number>> };
}

export function createPeerClients<N extends PeerName>(config: PeerConfig<N>, names: readonly N[], options: PeerClientOptions<N> = {}): PeerClients<N> {
  const settings = config as unknown as Record<string, string | number | undefined>;
  const out: Record<string, unknown> = {};
  const made: Array<{ close(): void }> = [];
  for (const name of names) {
    const spec = PEERS[name];
    const deadlineMs = options.deadlines?.[name] ?? settings[spec.deadline];
    // every peer call has a configured deadline: a config without one is a wiring mistake, found at start
    if (typeof deadlineMs !== 'number') throw new Error(`no deadline for the ${name} client (${spec.deadline} is not in the config)`);
    const own = 'methodDeadlineMs' in spec ? spec.methodDeadlineMs : undefined;
    const methodDeadlineMs = { ...own, ...options.methodDeadlines?.[name] } as Record<string, number>;
    const client = createClient(spec.client as Parameters<typeof createClient>[0], String(settings[spec.address]), spec.peer, { deadlineMs, methodDeadlineMs });
    made.push(client);
    out[name] = client;
  }
  out.close = () => {
    for (const c of made) c.close();
  };
  return out as PeerClients<N>;
}
