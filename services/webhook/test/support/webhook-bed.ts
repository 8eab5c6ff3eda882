/**
 * The webhook tests' bed: the real Postgres, a certificate of this run in a CA file the service
 * trusts, a publisher bus on the test's stream prefix and the webhook service started in-process
 * (support/start-webhook.ts) with `env` on top. `close()` stops the service, removes the prefix's
 * streams and the CA file.
 */
import { rmSync } from 'node:fs';
import { type Bus, type Db, type Logger, Registry, type SelfSignedCert, TEST_DATABASE_URL, closeTestBus, createDb } from '@agw/shared';
import type { LookupAll } from '../../src/target/target-guard';
import { capturingLogger, publisherBus, writeCaFile } from './harness';
import { receiverCert } from './https-receiver';
import { type StartedWebhook, startWebhook } from './start-webhook';

export interface WebhookBed {
  db: Db;
  bus: Bus;
  cert: SelfSignedCert;
  caFile: string;
  service: StartedWebhook;
  close(): Promise<void>;
}

export async function startWebhookBed(prefix: string, o: { env?: Record<string, string>; logger?: Logger; registry?: Registry; lookup?: LookupAll } = {}): Promise<WebhookBed> {
  const db = createDb(TEST_DATABASE_URL);
  const cert = receiverCert();
  const caFile = writeCaFile(cert.cert);
  const bus = await publisherBus(prefix);
  const service = await startWebhook(prefix, caFile, { env: o.env, logger: o.logger ?? capturingLogger(), registry: o.registry ?? new Registry(), overrides: o.lookup ? { lookup: o.lookup } : {} });
  return {
    db,
    bus,
    cert,
    caFile,
    service,
    close: async () => {
      await service.close();
      await closeTestBus(bus);
      await db.destroy();
      rmSync(caFile, { force: true });
    },
  };
}
