/**
 * The managed-session service's definition: the agent platform client, the session domain, the consumer supervisor,
 * tool confirmations and the gRPC binding. main.ts runs it; integration tests start the same definition in-process
 * (`startService(managedService(), { config, overrides })`, test/support/start-managed.ts).
 */
import { ApprovalRepository, DecisionPublisher, EventOutboxRepository, type ServiceDefinition, TenantSettingsReadModel } from '@agw/shared';
import { AgentConfigRepository } from './agents/agent-config.repository';
import { AgentConfigs } from './agents/agent-configs';
import { type ManagedConfig, loadManagedConfig, replicaIdOf } from './config';
import { ConfirmationRepository } from './confirmations/confirmation.repository';
import { routeSessionActivity } from './confirmations/session-activity-routing';
import { ToolConfirmations } from './confirmations/tool-confirmations';
import { ConsumerSupervisor } from './consumer/consumer-supervisor';
import { managedGrpcService } from './grpc/managed.grpc';
import { createManagedMetrics } from './metrics';
import { subscribeSessionActivity } from './nats/session-activity.subscriber';
import type { AgentPlatform } from './platform/agent-platform';
import { createAnthropicPlatform, unconfiguredPlatform } from './platform/anthropic-platform';
import { SessionInterrupter } from './sessions/session-interrupter';
import { SessionLauncher } from './sessions/session-launcher';
import { SessionRecorder } from './sessions/session-recorder';
import { SessionRepository } from './sessions/session.repository';
import { SessionViews } from './sessions/session-views';
import { TenantThresholds } from './sessions/tenant-thresholds';

/** What an in-process test reaches into. */
export interface ManagedApi {
  /** the sessions and their leases */
  sessions: SessionRepository;
  configs: AgentConfigs;
  /** the platform's confirmation requests and their delivery (a test sweeps instead of waiting for the timer) */
  confirmations: ToolConfirmations;
}

/**
 * What a test may put in place: the agent platform (default: Claude Managed Agents at ANTHROPIC_BASE_URL with
 * ANTHROPIC_API_KEY, or one that refuses every call when no key is set).
 */
export interface ManagedOverrides {
  platform: AgentPlatform;
}

export const managedService = (): ServiceDefinition<ManagedConfig, ManagedApi, ManagedOverrides> => ({
  name: 'managed',
  loadConfig: loadManagedConfig,
  start: async ({ config, logger, registry, postgres, nats, peers, overrides }) => {
    const db = await postgres();
    const bus = await nats();
    const clients = peers(['audit', 'policy', 'vault']);
    const publisher = new DecisionPublisher(bus, new EventOutboxRepository(db, 'managed'), logger);
    publisher.start();

    const repo = new SessionRepository(db, (status) => metrics.sessionsEnded.inc({ status }));
    const configRepo = new AgentConfigRepository(db);
    const configs = new AgentConfigs(configRepo, config.defaultModel);
    const platform =
      overrides.platform ??
      (config.anthropicApiKey
        ? createAnthropicPlatform({
            apiKey: config.anthropicApiKey,
            baseURL: config.anthropicBaseUrl,
            environments: { get: (k) => configRepo.resource(k), put: (k, id) => configRepo.putResource(k, id) },
          })
        : unconfiguredPlatform());
    if (!config.anthropicApiKey) logger.warn('ANTHROPIC_API_KEY is not set: managed sessions cannot be created (configs still work)');
    const recorder = new SessionRecorder(clients.audit, clients.vault);
    const interrupter = new SessionInterrupter(repo, platform, recorder, publisher, logger, (id, auto) => {
      metrics.interrupts.inc({ trigger: auto ? 'auto' : 'user' });
      void supervisor.detach(id, 'session_ended');
    });
    const thresholds = new TenantThresholds(new TenantSettingsReadModel(db), config.anomalyThreshold);
    const confirmations = new ToolConfirmations({
      confirmations: new ConfirmationRepository(db),
      approvals: new ApprovalRepository(db),
      sessions: repo,
      configs,
      platform,
      policy: clients.policy,
      vault: clients.vault,
      recorder,
      approvalExpirySeconds: (t) => thresholds.approvalExpirySeconds(t),
      onDelivered: (s) => void supervisor.onSessionActivity(s.tenant_id, s.id),
      logger,
    });
    const supervisor: ConsumerSupervisor = new ConsumerSupervisor(
      repo,
      {
        platform,
        repo,
        recorder,
        logger,
        threshold: (t) => thresholds.threshold(t),
        onAnomaly: async (s, e, score, signals) => interrupter.onAnomaly(s, { id: e.id, tool: String(e.name) }, score, signals, await thresholds.threshold(s.tenant_id)),
        onEventProcessed: () => metrics.eventsConsumed.inc(),
        onConfirmationRequest: (s, e) => confirmations.request(s, e),
        idleTimeoutMs: config.sseTimeoutSeconds * 1000,
        reconnectDelayMs: config.reconnectDelayMs,
      },
      {
        owner: replicaIdOf(config),
        leaseSeconds: config.leaseSeconds,
        expire: async (s) => {
          await interrupter.interrupt(s.tenant_id, s.id, 'max_session_hours exceeded', true);
        },
      },
      logger,
    );
    const metrics = createManagedMetrics(registry, () => supervisor.size, () => repo.countActive());
    const launcher = new SessionLauncher({
      configs,
      configRepo,
      repo,
      platform,
      policy: clients.policy,
      recorder,
      attach: (s) => supervisor.attach(s),
      onCreated: () => metrics.sessionsCreated.inc(),
      limits: { maxConcurrent: config.maxConcurrentSessions, maxDaily: config.maxDailySessions },
      logger,
    });
    const views = new SessionViews(repo, configs, clients.audit, clients.policy);
    const activity = subscribeSessionActivity(
      bus,
      routeSessionActivity({ activity: (tenantId, sessionId) => supervisor.onSessionActivity(tenantId, sessionId), deliver: (tenantId, actionId) => confirmations.deliver(tenantId, actionId) }),
      logger,
    );
    supervisor.start();
    confirmations.start(config.confirmationSweepMs);
    return {
      grpc: [managedGrpcService({ configs, launcher, interrupter, views, repo }, logger)],
      // closed in reverse: consumers release their leases first, then the relay (runService closes the clients after)
      closers: [
        async () => {
          publisher.stop();
          await publisher.relay();
        },
        () => activity.stop(),
        () => confirmations.stop(),
        () => supervisor.close(),
      ],
      info: { platform: config.anthropicApiKey ? (config.anthropicBaseUrl ?? 'anthropic') : 'unconfigured' },
      api: { sessions: repo, configs, confirmations },
    };
  },
});
