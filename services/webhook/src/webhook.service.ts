/**
 * The webhook service's definition: the target guard and HTTPS sender, the delivery worker, the JetStream
 * consumers and the gRPC bindings, on the stores and vault client runService hands out. main.ts runs it;
 * integration tests start the same definition in-process against the real stores (test/support/start-webhook.ts).
 */
import { type ServiceDefinition, TenantSettingsReadModel, internalCidrsAllowed, openSecretRequest } from '@agw/shared';
import { type WebhookConfig, loadWebhookConfig } from './config';
import { DeliveryRepository } from './delivery/delivery.repository';
import { DeliveryRetention } from './delivery/delivery-retention';
import { DeliveryWorker } from './delivery/delivery-worker';
import { TenantWebhookRepository, WEBHOOK_SETTINGS_CACHE_MS } from './delivery/tenant-webhook.repository';
import { WebhookDeliveries } from './delivery/webhook-deliveries';
import { WebhookSecrets } from './delivery/webhook-secrets';
import { webhookGrpcService } from './grpc/webhook.grpc';
import { createWebhookMetrics, registerBacklogGauge } from './metrics';
import { consumeDecisions } from './nats/decision.consumer';
import { consumeSessionEvents } from './nats/session.consumer';
import { consumeSiemExport } from './nats/siem.consumer';
import { SiemExport } from './siem/siem-export';
import { HttpsSender } from './target/https-sender';
import { type LookupAll, TargetGuard } from './target/target-guard';

/** What an in-process test reaches into: the deliveries (enqueue, list, the worker's state). */
export interface WebhookApi {
  deliveries: WebhookDeliveries;
}

/** What a test may put in place: the DNS look-up of the target guard (a test's names resolve to its own addresses). */
export interface WebhookOverrides {
  lookup: LookupAll;
}

export function webhookService(): ServiceDefinition<WebhookConfig, WebhookApi, WebhookOverrides> {
  return {
    name: 'webhook',
    loadConfig: loadWebhookConfig,
    start: async ({ config, logger, registry, postgres, nats, peers, overrides }) => {
      const db = await postgres();
      const bus = await nats();
      const metrics = createWebhookMetrics(registry);
      const guard = new TargetGuard(internalCidrsAllowed(config.allowCidrs, config.profile), overrides.lookup);
      const sender = new HttpsSender({
        guard,
        timeoutMs: config.timeoutMs,
        connectTimeoutMs: config.connectTimeoutMs,
        caFile: config.caFile,
      });
      const repo = new DeliveryRepository(db, config.streamPrefix);
      const tenants = new TenantWebhookRepository(new TenantSettingsReadModel(db, WEBHOOK_SETTINGS_CACHE_MS));
      tenants.followChanges(bus);
      const { vault } = peers(['vault']);
      const secrets = new WebhookSecrets(async (tenantId, sealedJson) => (await vault.openSecret(openSecretRequest(tenantId, 'webhook_secret', sealedJson))).plaintext);
      const leaseMs = config.timeoutMs + config.connectTimeoutMs + 5_000;
      const worker = new DeliveryWorker({ repo, tenants, sender, secrets, metrics, logger }, { concurrency: config.concurrency, perTenant: config.perTenantConcurrency, pollMs: config.pollMs, leaseMs });
      const deliveries = new WebhookDeliveries({ repo, tenants, worker, metrics, leaseMs });
      const retention = new DeliveryRetention(repo, config.retentionDays, logger);
      registerBacklogGauge(registry, () => repo.pendingCount());
      const decisions = await consumeDecisions(bus, deliveries, logger);
      const sessionEvents = await consumeSessionEvents(bus, deliveries, logger);
      // decisions as OCSF events to each tenant's SIEM collector (siem/siem-export.ts)
      const siemTokens = new WebhookSecrets(async (tenantId, sealedJson) => (await vault.openSecret(openSecretRequest(tenantId, 'siem_token', sealedJson))).plaintext);
      const siem = new SiemExport({
        tenants,
        sender,
        webhookSecret: (tenantId, t) => secrets.of(tenantId, t),
        siemToken: async (tenantId, sealed) => (await siemTokens.of(tenantId, { secret: null, sealedSecret: sealed })) ?? '',
        events: metrics.siemEvents,
        logger,
      });
      const siemExport = await consumeSiemExport(bus, siem, logger, { maxBatch: config.siemBatchMax, lingerMs: config.siemLingerMs, maxRetryDelayMs: config.siemMaxRetryDelayMs });
      worker.start();
      retention.start();
      return {
        grpc: [webhookGrpcService(deliveries, guard, logger)],
        // closed in reverse (after the gRPC server): stop taking events, finish attempts in flight, then the client and stores
        closers: [() => retention.stop(), () => worker.stop(), () => decisions.stop(), () => sessionEvents.stop(), () => siemExport.stop()],
        api: { deliveries },
        info: { consuming: 'decision and session events, the SIEM export' },
      };
    },
  };
}
