/**
 * Fairness between tenants, against the real stores: one tenant's receiver that never answers holds at
 * most its share of a replica's attempt slots, so another tenant's event is still delivered at once.
 */
import { rmSync } from 'node:fs';
import { type Bus, type Db, Registry, createDb, createLogger, migrateToLatest } from '@agw/shared';
import { type WebhookService, startWebhookService } from '../src/webhook-service';
import { DATABASE_URL, createTenant, decisionEvent, deleteStreams, publishDecision, publisherBus, testConfig, uniquePrefix, writeCaFile } from './support/harness';
import { type Receiver, selfSignedCert, startReceiver } from './support/https-receiver';

jest.setTimeout(60_000);

const prefix = uniquePrefix('fair');
let db: Db;
let bus: Bus;
let caFile: string;
let service: WebhookService;
let slow: Receiver;
let fast: Receiver;

beforeAll(async () => {
  await migrateToLatest(DATABASE_URL);
  db = createDb(DATABASE_URL);
  const cert = selfSignedCert();
  caFile = writeCaFile(cert.cert);
  bus = await publisherBus(prefix);
  slow = await startReceiver(cert, () => 'hang');
  fast = await startReceiver(cert);
  const config = testConfig(prefix, caFile, { WEBHOOK_CONCURRENCY: '8', WEBHOOK_PER_TENANT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '4000' });
  service = await startWebhookService(config, createLogger('webhook', 'silent'), new Registry());
});

afterAll(async () => {
  await service?.close();
  await slow.close();
  await fast.close();
  await deleteStreams(bus);
  await bus.close();
  await db.destroy();
  rmSync(caFile, { force: true });
});

test('a hanging receiver holds at most its per-tenant share; another tenant is delivered at once', async () => {
  const stuck = await createTenant(db, { url: slow.url() });
  const other = await createTenant(db, { url: fast.url() });
  for (let i = 0; i < 20; i++) await publishDecision(bus, decisionEvent(stuck.id));
  await slow.waitFor(2, 5_000);
  const t0 = performance.now();
  await publishDecision(bus, decisionEvent(other.id));
  await fast.waitFor(1, 2_000);
  expect(performance.now() - t0).toBeLessThan(1000);
  // still only the tenant's share in flight while its first attempts hang
  await new Promise((r) => setTimeout(r, 1000));
  expect(slow.requests).toHaveLength(2);
});
