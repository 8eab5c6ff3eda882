/** Upstream MCP servers (federation, their OAuth connections, tool approvals): what their routes use. */
import type { GatewayConfig } from '../config';
import type { FederatedCatalog } from '../federation/federated-catalog';
import type { SettingsService } from '../tenants/settings.service';

export interface UpstreamsFeature {
  config: GatewayConfig;
  federation: FederatedCatalog;
  /** approvals_require_human: who may approve a tool definition */
  settings: SettingsService;
}
