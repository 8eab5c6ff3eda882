/**
 * Tenants and who acts in them: sign-up and log-in (password, GitHub, SSO), console sessions, members, API
 * keys, settings, backups, the public and system pages: what their routes use.
 */
import type { Db, Logger, Registry } from '@agw/shared';
import type { GatewayConfig } from '../config';
import type { FederatedCatalog } from '../federation/federated-catalog';
import type { HealthService } from '../health';
import type { McpOauthProvider } from '../oauth/mcp-oauth-provider';
import type { RateLimiter } from '../pipeline/rate-limiter';
import type { SsoService } from '../sso/sso.service';
import type { Accounts } from '../tenants/accounts';
import type { ApiKeyService } from '../tenants/api-keys';
import type { ConsoleRefresh } from '../tenants/console-refresh';
import type { Members } from '../tenants/members';
import type { SessionTokens } from '../tenants/session-tokens';
import type { SettingsService } from '../tenants/settings.service';
import type { TenantRepository } from '../tenants/tenant.repository';

export interface TenantsFeature {
  config: GatewayConfig;
  logger: Logger;
  registry: Registry;
  db: Db;
  health: HealthService;
  tenants: TenantRepository;
  accounts: Accounts;
  members: Members;
  apiKeys: ApiKeyService;
  sessions: SessionTokens;
  consoleRefresh: ConsoleRefresh;
  settings: SettingsService;
  sso: SsoService;
  rateLimiter: RateLimiter;
  /** a signed-in member's OAuth consents */
  oauth: McpOauthProvider;
  /** a removed member's per-user upstream connections are ended */
  federation: FederatedCatalog;
}
