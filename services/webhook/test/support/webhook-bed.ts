/**
 * The webhook tests' bed: the real Postgres (migrated), a certificate of this run in a CA file the service
 * trusts, a publisher bus on the test's stream prefix and the webhook service started in-process
 * (startWebhookService) on testConfig with `env` on top. `close()` stops the service, removes the prefix's
 * streams and the CA file.
 */
import { rmSync } from 'node:fs';
import { type Bus, type Db, type Logger, Registry, createDb, migrateToLatest } from '@agw/shared';
import type { LookupAll } from '../../src/target/target-guard';
import { type WebhookService, startWebhookService } from '../../src/webhook-service';
import { DATABASE_URL, capturingLogger, deleteStreams, publisherBus, testConfig, writeCaFile } from './harness';
import { type SelfSignedCert, selfSignedCert } from './https-receiver';

export interface WebhookBed {
  db: Db;
  bus: Bus;
  cert: SelfSignedCert;
  caFile: string;
  service: WebhookService;
  close(): Promise<void>;
}

export async function startWebhookBed(prefix: string, o: { env?: Record<string, string>; logger?: Logger; registry?: Registry; lookup?: LookupAll } = {}): Promise<WebhookBed> {
  await migrateToLatest(DATABASE_URL);
  const db = createDb(DATABASE_URL);
  const cert = selfSignedCert();
  const caFile = writeCaFile(cert.cert);
  const bus = await publisherBus(prefix);
  const service = await startWebhookService(testConfig(prefix, caFile, o.env), o.logger ?? capturingLogger(), o.registry ?? new Registry(), o.lookup ? { lookup: o.lookup } : {});
  return {
    db,
    bus,
    cert,
    caFile,
    service,
    close: async () => {
      await service.close();
      await deleteStreams(bus);
      await bus.close();
      await db.destroy();
      rmSync(caFile, { force: true });
    },
  };
}
