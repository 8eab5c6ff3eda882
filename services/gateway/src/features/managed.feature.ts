/** Managed agent sessions (agents and sessions on the external agent platform, their audit and compliance): what their routes use. */
import type { ManagedClient, VaultClient } from '../clients/grpc-clients';
import type { GatewayConfig } from '../config';
import type { FederatedCatalog } from '../federation/federated-catalog';
import type { SessionTokens } from '../tenants/session-tokens';

export interface ManagedFeature {
  /** the managed service (agents, sessions, consumers on the platform's event stream) */
  managed: ManagedClient;
  /** a session's MCP bearer, when its creator gives none */
  sessions: SessionTokens;
  /** the public base URL that a session's MCP server URL is built on */
  config: GatewayConfig;
  /** a session's tools that may need a human, asked of the federated catalog and the credential tools */
  federation: FederatedCatalog;
  vault: VaultClient;
}
