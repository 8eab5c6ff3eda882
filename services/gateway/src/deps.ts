/**
 * Everything the gateway's edge is built from, made once by gateway.ts. Each feature module (features/*.feature.ts:
 * tool calls, approvals, audit, policy, OAuth, upstreams, credentials, tenants, managed sessions) declares what its routes use, and
 * each route factory takes only its part (`Pick<AuditFeature, 'audit' | 'config'>`); GatewayDeps is all of them
 * (checked here: it extends every feature), which app.ts composes. The MCP modules declare theirs beside them
 * (`mcp/mcp-deps.ts`), so that mcp/ imports nothing from above it.
 */
import type { Bus, Db, Logger, Redis, Registry } from '@agw/shared';
import type { ApprovalExpiry } from './approvals/approval-expiry';
import type { ApprovalQueue } from './approvals/approval-queue';
import type { AuditClient, PolicyClient, VaultClient, WebhookClient } from './clients/grpc-clients';
import type { AnchorClient, ManagedClient, MerkleClient } from './clients/grpc-clients';
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
import type { ApprovalsFeature } from './features/approvals.feature';
import type { AuditFeature } from './features/audit.feature';
import type { CredentialsFeature } from './features/credentials.feature';
import type { ManagedFeature } from './features/managed.feature';
import type { McpDeps } from './mcp/mcp-deps';
import type { OauthFeature } from './features/oauth.feature';
import type { PolicyFeature } from './features/policy.feature';
import type { TenantsFeature } from './features/tenants.feature';
import type { ToolCallsFeature } from './features/tool-calls.feature';
import type { UpstreamsFeature } from './features/upstreams.feature';

export interface GatewayDeps
  extends ToolCallsFeature, ApprovalsFeature, AuditFeature, PolicyFeature, OauthFeature, UpstreamsFeature, CredentialsFeature, TenantsFeature, ManagedFeature, McpDeps {
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
