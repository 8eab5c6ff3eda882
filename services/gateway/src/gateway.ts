/**
 * Builds the gateway from its config: stores, gRPC clients, domain services, the express app.
 * main.ts runs it as a service; integration tests build it in-process against the real stores.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { connectBus, createDb, createRedis, type Logger, pingPostgres, onTenantChange, publishTenantChange, type Registry } from '@agw/shared';
import { createApp } from './app';
import { ApprovalExpiry } from './approvals/approval-expiry';
import { ApprovalQueue } from './approvals/approval-queue';
import { ApprovalRepository } from './approvals/approval.repository';
import { ApprovedRetries } from './approvals/approved-retry';
import { createAuditClient, createPolicyClient, createVaultClient, createWebhookClient } from './clients/grpc-clients';
import type { GatewayConfig } from './config';
import type { GatewayDeps } from './deps';
import { DecisionPublisher } from './events/decision-publisher';
import { EventOutboxRepository } from './events/event-outbox.repository';
import { HealthService } from './health';
import { createLimitedServer } from './http/server-limits';
import { createAnchorClient, createComplianceClient, createFederationClient, createManagedClient, createMerkleClient } from './clients/grpc-clients';
import { FederatedCatalog } from './federation/federated-catalog';
import { createGatewayMetrics } from './metrics';
import { AddressPolicy, caFileContext, createPinnedFetch } from '@agw/egress';
import { ClientMetadataDocuments } from './oauth/client-metadata-documents';
import { McpOauthProvider } from './oauth/mcp-oauth-provider';
import { ConsoleRefresh } from './tenants/console-refresh';
import { OauthRepository } from './oauth/oauth.repository';
import { mcpOauthUrls } from './oauth/oauth.routes';
import { DecisionRecorder } from './pipeline/decision-recorder';
import { createGatewayConstraints } from './pipeline/gateway-constraints';
import { RateLimiter } from './pipeline/rate-limiter';
import { ToolCallPipeline } from './pipeline/tool-call.pipeline';
import { Accounts } from './tenants/accounts';
import { ApiKeyRepository } from './tenants/api-key.repository';
import { ApiKeyService } from './tenants/api-keys';
import { SessionTokens } from './tenants/session-tokens';
import { SettingsRepository } from './tenants/settings.repository';
import { SettingsService, vaultWebhookSecretSealer } from './tenants/settings.service';
import { startWebhookSecretSealing } from './tenants/webhook-secret-sealing';
import { TenantRepository } from './tenants/tenant.repository';
import { withErasureMarks } from './vault/erased-pii-marker';
import { credentialChanges } from './vault/credential-changes';
import { createVaultBroker } from './vault/vault-broker';
import { createVaultPiiGuard } from './vault/vault-pii-guard';

export interface Gateway {
  deps: GatewayDeps;
  app: ReturnType<typeof createApp>;
  listen(): Promise<{ port: number; close(): Promise<void> }>;
  close(): Promise<void>;
}

export async function buildGateway(config: GatewayConfig, logger: Logger, registry: Registry): Promise<Gateway> {
  const metrics = createGatewayMetrics(registry);
  const db = createDb(config.databaseUrl, { max: config.databasePoolMax });
  await pingPostgres(db);
  const redis = createRedis(config.redisUrl);
  const bus = await connectBus(config.natsUrl, config.streamPrefix, 'gateway');
  const policy = createPolicyClient(config);
  const audit = createAuditClient(config);
  const merkle = createMerkleClient(config);
  const compliance = createComplianceClient(config);
  const anchor = createAnchorClient(config);
  const webhook = createWebhookClient(config);
  // register/delete of a credential invalidate the broker's credential cache here and on every replica
  const credentials = credentialChanges(createVaultClient(config), bus);
  const vault = credentials.vault;
  const federation = new FederatedCatalog(createFederationClient(config), bus);
  const managed = createManagedClient(config);
  const adminEmails = new Set(
    config.adminEmails
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  if (config.profile === 'production' && !config.jwtSecret) throw new Error('JWT_SECRET is required in the production profile');
  const sessions = new SessionTokens(config.jwtSecret, config.jwtTtlSeconds);
  const tenants = new TenantRepository(db);
  const rateLimiter = new RateLimiter(redis);
  // an API key's cache look-up and its tenant's rate limit in one Redis round trip
  const apiKeys = new ApiKeyService(new ApiKeyRepository(db), redis, { limiter: rateLimiter, limitOf: (tenantId) => settings.rateLimit(tenantId) });
  const settings = new SettingsService(new SettingsRepository(db), policy, { rps: config.defaultRateLimitRps, burst: config.defaultRateLimitBurst }, async (url) => {
    await webhook.checkTarget({ url });
  }, (tenantId) => publishTenantChange(bus, 'settings', tenantId), vaultWebhookSecretSealer(vault), async (tenantId, mode) => {
    await federation.client.setToolApproval({ tenantId, mode });
  });
  // a change saved on another gateway replica reaches this one's settings cache at once (rate limits, failure modes)
  onTenantChange(bus, 'settings', (tenantId) => settings.invalidate(tenantId));
  // rows written before webhook secrets were sealed: sealed in the background (docs/webhooks.md)
  const stopSealing = startWebhookSecretSealing(db, vaultWebhookSecretSealer(vault), logger);
  const publisher = new DecisionPublisher(bus, new EventOutboxRepository(db), logger);
  publisher.start();
  const recorder = new DecisionRecorder(audit, publisher, { retryBudgetMs: config.auditAppendRetryMs });
  const approvalRepo = new ApprovalRepository(db);
  // the vault service (VAULT_GRPC_URL) protects PII and brokers credentialed calls unless a feature overrides it
  const broker = createVaultBroker(vault, credentials.cache, federation);
  const approvalExpiry = new ApprovalExpiry(approvalRepo, recorder, logger);
  approvalExpiry.start(config.approvalSweepMs);
  const pipeline = new ToolCallPipeline({
    policy,
    recorder,
    approvals: approvalRepo,
    approvedRetries: new ApprovedRetries(approvalRepo, recorder, logger),
    constraints: createGatewayConstraints(redis),
    pii: createVaultPiiGuard(vault),
    broker,
    metrics,
    logger,
  });
  const oauthUrls = mcpOauthUrls(config.publicBaseUrl);
  const documents = new ClientMetadataDocuments({
    fetch: createPinnedFetch({
      policy: new AddressPolicy({ allowCidrs: (config.oauthClientMetadataAllowCidrs ?? (config.profile === 'local' ? '127.0.0.0/8,::1/128' : '')).split(',').map((c) => c.trim()).filter(Boolean) }),
      maxResponseBytes: 64 * 1024,
      connectTimeoutMs: 5000,
      headersTimeoutMs: 5000,
      secureContext: caFileContext(config.oauthClientMetadataCaFile),
    }),
  });
  const oauth = new McpOauthProvider({ repo: new OauthRepository(db), resource: oauthUrls.resource, documents, consentUrl: (id) => `${new URL(config.publicBaseUrl).origin}/oauth/consent/${id}` });
  const verifySecret = config.jwtSecret ? new TextEncoder().encode(`${config.jwtSecret}:verify-email`) : randomBytes(32);
  const deps: GatewayDeps = {
    config,
    logger,
    registry,
    metrics,
    db,
    redis,
    bus,
    policy,
    // audit reads show crypto-shredded PII as erased; the recorder appends through the plain client
    audit: withErasureMarks(audit, vault, logger, config.probeDeadlineMs),
    webhook,
    merkle,
    compliance,
    anchor,
    vault,
    federation,
    managed,
    oauth,
    oauthUrls,
    apiKeys,
    sessions,
    consoleRefresh: new ConsoleRefresh(db),
    tenants,
    accounts: new Accounts(tenants, sessions, {
      publicBaseUrl: config.publicBaseUrl,
      adminEmails,
      logger,
      verifySecret,
      requireVerifiedEmail: config.profile === 'production' || config.requireVerifiedEmail,
    }),
    settings,
    rateLimiter,
    pipeline,
    approvals: new ApprovalQueue(approvalRepo, recorder, broker, {
      currentRevision: async (tenantId) => (await policy.getTenantPolicy({ tenantId })).bundle?.revision || 'unknown',
      expireNow: approvalExpiry.expireNow,
    }),
    approvalExpiry,
    health: new HealthService({ db, redis, bus, services: { policy: policy.raw, audit: audit.raw, webhook: webhook.raw, vault: vault.raw, anchor: anchor.raw, managed: managed.raw } }),
    adminEmails,
  };
  const app = createApp(deps);
  const close = async () => {
    await approvalExpiry.stop();
    stopSealing();
    publisher.stop();
    await publisher.relay();
    policy.close();
    audit.close();
    merkle.close();
    compliance.close();
    anchor.close();
    webhook.close();
    vault.close();
    federation.client.close();
    managed.close();
    await bus.close();
    redis.disconnect();
    await db.destroy();
  };
  return {
    deps,
    app,
    close,
    listen: async () => {
      const { server, stop } = createLimitedServer(
        app,
        { headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, keepAliveTimeoutMs: config.keepAliveTimeoutMs, maxConnections: config.maxConnections, graceMs: config.shutdownGraceMs },
        logger,
      );
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => resolve());
      });
      const addr = server.address();
      return { port: typeof addr === 'object' && addr ? addr.port : config.port, close: stop };
    },
  };
}
