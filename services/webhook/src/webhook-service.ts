/**
 * Builds the webhook service from its config: Postgres, NATS, the target guard and HTTPS sender, the
 * delivery worker, the JetStream consumer and the gRPC server. main.ts runs it; integration tests build
 * it in-process against the real stores.
 */
import { vault } from '@agw/proto';
import { connectBus, createClient, createDb, type Logger, pingNats, pingPostgres, type ReadinessCheck, type Registry, startGrpcServer } from '@agw/shared';
import { type WebhookConfig, allowedInternalCidrs } from './config';
import { DeliveryRepository } from './delivery/delivery.repository';
import { DeliveryRetention } from './delivery/delivery-retention';
import { DeliveryWorker } from './delivery/delivery-worker';
import { TenantWebhookRepository } from './delivery/tenant-webhook.repository';
import { WebhookDeliveries } from './delivery/webhook-deliveries';
import { WebhookSecrets } from './delivery/webhook-secrets';
import { webhookGrpcService } from './grpc/webhook.grpc';
import { createWebhookMetrics, registerBacklogGauge } from './metrics';
import { consumeDecisions } from './nats/decision.consumer';
import { consumeSessionEvents } from './nats/session.consumer';
import { HttpsSender } from './target/https-sender';
import { type LookupAll, TargetGuard } from './target/target-guard';

export interface WebhookService {
  /** closed in reverse order */
  closers: Array<() => Promise<void> | void>;
  checks: Record<string, ReadinessCheck>;
  deliveries: WebhookDeliveries;
  grpcPort: number;
  close(): Promise<void>;
}

export async function startWebhookService(config: WebhookConfig, logger: Logger, registry: Registry, o: { lookup?: LookupAll } = {}): Promise<WebhookService> {
  const db = createDb(config.databaseUrl, { max: config.databasePoolMax });
  await pingPostgres(db);
  const bus = await connectBus(config.natsUrl, config.streamPrefix, 'webhook');
  const metrics = createWebhookMetrics(registry);
  const guard = new TargetGuard(allowedInternalCidrs(config), o.lookup);
  const sender = new HttpsSender({
    guard,
    timeoutMs: config.timeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    caFile: config.caFile,
  });
  const repo = new DeliveryRepository(db, config.streamPrefix);
  const tenants = new TenantWebhookRepository(db);
  tenants.followChanges(bus);
  const vaultClient = createClient(vault.VaultServiceClient, config.vaultGrpcUrl, 'vault service', { deadlineMs: config.vaultDeadlineMs });
  const secrets = new WebhookSecrets(async (tenantId, sealedJson) => (await vaultClient.openSecret({ tenantId, purpose: 'webhook_secret', sealedJson })).plaintext);
  const leaseMs = config.timeoutMs + config.connectTimeoutMs + 5_000;
  const worker = new DeliveryWorker({ repo, tenants, sender, secrets, metrics, logger }, { concurrency: config.concurrency, perTenant: config.perTenantConcurrency, pollMs: config.pollMs, leaseMs });
  const deliveries = new WebhookDeliveries({ repo, tenants, worker, metrics, leaseMs });
  const retention = new DeliveryRetention(repo, config.retentionDays, logger);
  registerBacklogGauge(registry, () => repo.pendingCount());
  const grpc = await startGrpcServer(config.grpcHost, config.grpcPort, [webhookGrpcService(deliveries, guard, logger)]);
  const decisions = await consumeDecisions(bus, deliveries, logger);
  const sessionEvents = await consumeSessionEvents(bus, deliveries, logger);
  worker.start();
  retention.start();
  logger.info({ grpcPort: grpc.port }, 'webhook gRPC listening; consuming decision and session events');
  // closed in reverse: stop taking events, finish attempts in flight, then the servers and stores
  const closers = [() => db.destroy(), () => vaultClient.close(), () => bus.close(), () => grpc.close(), () => retention.stop(), () => worker.stop(), () => decisions.stop(), () => sessionEvents.stop()];
  return {
    deliveries,
    grpcPort: grpc.port,
    closers,
    checks: {
      postgres: () => pingPostgres(db),
      nats: () => pingNats(bus),
    },
    close: async () => {
      for (const c of [...closers].reverse()) await c();
    },
  };
}
