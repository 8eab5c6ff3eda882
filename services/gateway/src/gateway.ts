/**
 * The gateway's service definition: domain services and the express app on the stores and gRPC clients
 * runService hands out (`ctx.postgres()`, `ctx.redis()`, `ctx.nats()`, `ctx.peers(...)`), the HTTP edge
 * (drained on SIGTERM for GATEWAY_SHUTDOWN_GRACE_MS) as its `http` server. main.ts runs it; integration
 * tests start the same definition in-process (`startService(gatewayService(), { config, logger })`).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { ApprovalRepository, internalCidrsAllowed, onTenantChange, publishTenantChange, type ServiceContext, type ServiceDefinition } from '@agw/shared';
import { createHttpEdge } from './app';
import { ApprovalExpiry } from './approvals/approval-expiry';
import { ApprovalQueue } from './approvals/approval-queue';
import { ApprovedRetries } from './approvals/approved-retry';
import { type GatewayConfig, loadGatewayConfig } from './config';
import type { GatewayDeps } from './deps';
import { DecisionPublisher } from './events/decision-publisher';
import { EventOutboxRepository } from './events/event-outbox.repository';
import { HealthService } from './health';
import { createLimitedServer } from './http/server-limits';
import { FederatedCatalog } from './federation/federated-catalog';
import { createGatewayMetrics } from './metrics';
import { AddressPolicy, caFileContext, createPinnedFetch } from '@agw/egress';
import { ClientMetadataDocuments } from './oauth/client-metadata-documents';
import { McpOauthProvider } from './oauth/mcp-oauth-provider';
import { ConsoleRefresh } from './tenants/console-refresh';
import { OauthRepository } from './oauth/oauth.repository';
import { OauthPurge } from './oauth/oauth-purge';
import { mcpOauthUrls } from './oauth/public-origins';
import { DecisionRecorder } from './pipeline/decision-recorder';
import { createGatewayConstraints } from './pipeline/gateway-constraints';
import { RateLimiter } from './pipeline/rate-limiter';
import { ToolCallPipeline } from './pipeline/tool-call.pipeline';
import { Accounts } from './tenants/accounts';
import { Members } from './tenants/members';
import { ControlPlaneRecords } from './tenants/control-plane-records';
import { ApiKeyRepository } from './tenants/api-key.repository';
import { ApiKeyService } from './tenants/api-keys';
import { SessionTokens } from './tenants/session-tokens';
import { SettingsRepository } from './tenants/settings.repository';
import { SettingsService, vaultWebhookSecretSealer } from './tenants/settings.service';
import { SsoService, vaultSsoSecretSealer } from './sso/sso.service';
import { SsoStateStore } from './sso/sso-state';
import { startWebhookSecretSealing } from './tenants/webhook-secret-sealing';
import { TenantRepository } from './tenants/tenant.repository';
import { withErasureMarks } from './vault/erased-pii-marker';
import { credentialChanges } from './vault/credential-changes';
import { createVaultBroker } from './vault/vault-broker';
import { createVaultPiiGuard } from './vault/vault-pii-guard';
import { ComplianceExporter } from './compliance/compliance-export';
import { GrpcAnchorReferences, GrpcAuditEvidence, GrpcPolicySnapshot } from './compliance/peer-sources';

/** What an in-process test reaches into. */
export interface Gateway {
  deps: GatewayDeps;
  app: ReturnType<typeof createHttpEdge>['app'];
}

export function gatewayService(): ServiceDefinition<GatewayConfig, Gateway> {
  return { name: 'gateway', loadConfig: loadGatewayConfig, start: startGateway };
}

async function startGateway({ config, logger, registry, postgres, redis: redisOf, nats, peers }: ServiceContext<GatewayConfig>) {
  const metrics = createGatewayMetrics(registry);
  const db = await postgres();
  const redis = redisOf();
  // NATS carries events (an outage sends them to the outbox) and cache invalidations: not a readiness condition
  const bus = await nats({ readiness: false });
  // the dependency probes and the erasure look-up behind audit reads answer within HEALTH_PROBE_DEADLINE_MS
  const probe = config.probeDeadlineMs;
  const clients = peers(['policy', 'audit', 'merkle', 'compliance', 'anchor', 'webhook', 'vault', 'federation', 'managed'], {
    methodDeadlines: { merkle: { health: probe }, anchor: { health: probe }, vault: { getHsmStatus: probe, filterErasedSubjects: probe } },
  });
  const { policy, audit, merkle, compliance, anchor, webhook, managed } = clients;
  // the compliance export's own deadline for its anchor and policy sections (a section past it says unavailable)
  const exportPeers = peers(['anchor', 'policy'], { deadlines: { anchor: config.exportPeerDeadlineMs, policy: config.exportPeerDeadlineMs } });
  const complianceExport = new ComplianceExporter({
    audit: new GrpcAuditEvidence(compliance),
    anchors: new GrpcAnchorReferences(exportPeers.anchor),
    policy: new GrpcPolicySnapshot(exportPeers.policy),
    maxBytes: config.exportMaxBytes,
  });
  // register/delete of a credential invalidate the broker's credential cache here and on every replica
  const credentials = credentialChanges(clients.vault, bus);
  const vault = credentials.vault;
  const federation = new FederatedCatalog(clients.federation, bus);
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
  const apiKeyRepo = new ApiKeyRepository(db);
  const apiKeys = new ApiKeyService(apiKeyRepo, redis, { limiter: rateLimiter, limitOf: (tenantId) => settings.rateLimit(tenantId) });
  const settings = new SettingsService(new SettingsRepository(db), policy, { rps: config.defaultRateLimitRps, burst: config.defaultRateLimitBurst }, async (url) => {
    await webhook.checkTarget({ url });
  }, (tenantId) => publishTenantChange(bus, 'settings', tenantId), vaultWebhookSecretSealer(vault), async (tenantId, mode) => {
    await federation.client.setToolApproval({ tenant_id: tenantId, mode });
  });
  // a change saved on another gateway replica reaches this one's settings cache at once (rate limits, failure modes)
  onTenantChange(bus, 'settings', (tenantId) => settings.invalidate(tenantId));
  // rows written before webhook secrets were sealed: sealed in the background (docs/webhooks.md)
  const stopSealing = startWebhookSecretSealing(db, vaultWebhookSecretSealer(vault), logger);
  const publisher = new DecisionPublisher(bus, new EventOutboxRepository(db, 'gateway'), logger);
  publisher.start();
  const recorder = new DecisionRecorder(audit, publisher, { retryBudgetMs: config.auditAppendRetryMs, hasWebhook: (tenantId, conn) => settings.hasWebhook(tenantId, conn) });
  const approvalRepo = new ApprovalRepository(db);
  // the vault service (VAULT_GRPC_URL) protects PII and brokers credentialed calls unless a feature overrides it
  const broker = createVaultBroker(vault, credentials.cache, federation);
  const approvalExpiry = new ApprovalExpiry(approvalRepo, recorder, logger);
  approvalExpiry.start(config.approvalSweepMs);
  const piiGuard = createVaultPiiGuard(vault);
  // a member's e-mail in an audit record: encrypted for its data subject (docs/vault.md)
  const pseudonymise = async (tenantId: string, actionId: string, email: string) => (await piiGuard.protect(tenantId, actionId, { email })).storedParams.email;
  const pipeline = new ToolCallPipeline({
    policy,
    recorder,
    approvals: approvalRepo,
    approvedRetries: new ApprovedRetries(approvalRepo, recorder, logger),
    constraints: createGatewayConstraints(redis),
    pii: piiGuard,
    broker,
    metrics,
    logger,
    // an API key's owner, for a per_user upstream (docs/federation.md): the member who issued it, if one did
    keyOwner: async (tenantId, keyHash) => {
      const by = await apiKeyRepo.issuerOf(tenantId, keyHash);
      if (!by?.startsWith('user:')) return undefined;
      const user = await tenants.findUserByEmail(by.slice('user:'.length).toLowerCase());
      return user && user.tenant_id === tenantId ? user.id : undefined;
    },
  });
  const oauthUrls = mcpOauthUrls(config.publicBaseUrl, config.publicOrigins, config.profile === 'local');
  const documents = new ClientMetadataDocuments({
    fetch: createPinnedFetch({
      policy: new AddressPolicy({ allowCidrs: internalCidrsAllowed(config.oauthClientMetadataAllowCidrs, config.profile) }),
      maxResponseBytes: 64 * 1024,
      connectTimeoutMs: 5000,
      headersTimeoutMs: 5000,
      secureContext: caFileContext(config.oauthClientMetadataCaFile),
    }),
    log: (url, cause) => logger.warn({ client_id: url, cause }, 'client metadata document unusable (the caller is told only that)'),
  });
  const oauth = new McpOauthProvider({ repo: new OauthRepository(db), urls: oauthUrls, documents, grantMaxAgeSeconds: config.oauthGrantMaxAgeDays * 86400, consentUrl: (id) => `${new URL(config.publicBaseUrl).origin}/oauth/consent/${id}` });
  const oauthPurge = new OauthPurge(db, logger);
  oauthPurge.start(config.oauthPurgeIntervalMs);
  const verifySecret = config.jwtSecret ? new TextEncoder().encode(`${config.jwtSecret}:verify-email`) : randomBytes(32);
  const sso = new SsoService(db, new SsoStateStore(redis), vaultSsoSecretSealer(vault), audit, { publicBaseUrl: config.publicBaseUrl, logger });
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
    audit: withErasureMarks(audit, vault, logger),
    webhook,
    merkle,
    complianceExport,
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
      requiresSso: (tenantId) => sso.requiresSso(tenantId),
    }),
    members: new Members(db, { publicBaseUrl: config.publicBaseUrl, logger }),
    settings,
    sso,
    rateLimiter,
    pipeline,
    approvals: new ApprovalQueue(approvalRepo, recorder, broker, {
      currentRevision: async (tenantId) => (await policy.getTenantPolicy({ tenant_id: tenantId })).bundle?.revision || 'unknown',
      expireNow: approvalExpiry.expireNow,
      pseudonymise,
    }),
    controlPlane: new ControlPlaneRecords(recorder, pseudonymise),
    approvalExpiry,
    health: new HealthService({ db, redis, bus, services: { policy: policy.raw, audit: audit.raw, webhook: webhook.raw, vault: vault.raw, anchor: anchor.raw, managed: managed.raw } }),
    adminEmails,
  };
  const { app, listener } = createHttpEdge(deps);
  return {
    api: { deps, app },
    http: {
      listen: async () => {
        const { server, stop } = createLimitedServer(
          listener,
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
    },
    // closed in reverse, after the HTTP server drained; then runService closes the gRPC clients and the stores
    closers: [
      async () => {
        publisher.stop();
        await publisher.relay();
      },
      () => stopSealing(),
      () => approvalExpiry.stop(),
      () => oauthPurge.stop(),
    ],
    info: { url: config.publicBaseUrl },
  };
}
