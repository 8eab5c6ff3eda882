/** Everything the HTTP layer needs, built once by main.ts and passed as one typed object. */
import type { Bus, Db, Logger, Redis, Registry } from '@agw/shared';
import type { ApprovalExpiry } from './approvals/approval-expiry';
import type { ApprovalQueue } from './approvals/approval-queue';
import type { AuditClient, PolicyClient, VaultClient, WebhookClient } from './clients/grpc-clients';
import type { AnchorClient, ComplianceClient, ManagedClient, MerkleClient } from './clients/grpc-clients';
import type { GatewayConfig } from './config';
import type { FederatedCatalog } from './federation/federated-catalog';
import type { HealthService } from './health';
import type { McpOauthProvider } from './oauth/mcp-oauth-provider';
import type { McpOauthUrls } from './oauth/public-origins';
import type { GatewayMetrics } from './metrics';
import type { ToolCallPipeline } from './pipeline/tool-call.pipeline';
import type { ControlPlaneRecords } from './tenants/control-plane-records';
import type { RateLimiter } from './pipeline/rate-limiter';
import type { Accounts } from './tenants/accounts';
import type { Members } from './tenants/members';
import type { ApiKeyService } from './tenants/api-keys';
import type { SessionTokens } from './tenants/session-tokens';
import type { ConsoleRefresh } from './tenants/console-refresh';
import type { SettingsService } from './tenants/settings.service';
import type { SsoService } from './sso/sso.service';
import type { TenantRepository } from './tenants/tenant.repository';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  registry: Registry;
  metrics: GatewayMetrics;
  db: Db;
  redis: Redis;
  bus: Bus;
  policy: PolicyClient;
  audit: AuditClient;
  merkle: MerkleClient;
  compliance: ComplianceClient;
  anchor: AnchorClient;
  webhook: WebhookClient;
  vault: VaultClient;
  /** upstream MCP servers (the vault's FederationService) and the cached catalog of their tools */
  federation: FederatedCatalog;
  managed: ManagedClient;
  /** OAuth 2.1 for the MCP endpoints: the authorization server's provider and its URLs */
  oauth: McpOauthProvider;
  oauthUrls: McpOauthUrls;
  apiKeys: ApiKeyService;
  sessions: SessionTokens;
  /** the console's refresh cookie sessions (survive a reload) */
  consoleRefresh: ConsoleRefresh;
  tenants: TenantRepository;
  accounts: Accounts;
  /** members of a tenant, their roles and invitations */
  members: Members;
  settings: SettingsService;
  /** single sign-on with each tenant's OpenID Connect provider */
  sso: SsoService;
  rateLimiter: RateLimiter;
  pipeline: ToolCallPipeline;
  /** control-plane changes recorded with the member who made them (http/control-plane-audit.ts); absent: not recorded */
  controlPlane?: ControlPlaneRecords;
  approvals: ApprovalQueue;
  approvalExpiry: ApprovalExpiry;
  health: HealthService;
  adminEmails: Set<string>;
}
