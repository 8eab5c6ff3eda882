/**
 * Fairness between tenants, against the real stores: one tenant's receiver that never answers holds at
 * most its share of a replica's attempt slots, so another tenant's event is still delivered at once.
 */
import { type Bus, type Db, createLogger } from '@agw/shared';
import type { StartedWebhook } from './support/start-webhook';
import { createTenant, decisionEvent, publishDecision, uniquePrefix } from './support/harness';
import { type WebhookBed, startWebhookBed } from './support/webhook-bed';
import { type Receiver, startReceiver } from './support/https-receiver';

jest.setTimeout(60_000);

const prefix = uniquePrefix('fair');
let bed: WebhookBed;
let db: Db;
let bus: Bus;
let service: StartedWebhook;
let slow: Receiver;
let fast: Receiver;

beforeAll(async () => {
  bed = await startWebhookBed(prefix, { env: { WEBHOOK_CONCURRENCY: '8', WEBHOOK_PER_TENANT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '4000' }, logger: createLogger('webhook', 'silent') });
  ({ db, bus, service } = bed);
  slow = await startReceiver(bed.cert, () => 'hang');
  fast = await startReceiver(bed.cert);
});

afterAll(async () => {
  await bed?.close();
  await slow.close();
  await fast.close();
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
