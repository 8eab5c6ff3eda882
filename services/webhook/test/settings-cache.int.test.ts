/**
 * The webhook settings cache against the real Postgres and NATS: events of a tenant read its webhook
 * settings from Postgres once, not per event; a settings change published by the gateway
 * (`changes.settings.<tenant>` on core NATS) applies to the next events; delivery attempts always read
 * the stored settings.
 */
import { type Bus, type Db, type SelfSignedCert, publishTenantChange } from '@agw/shared';
import type { StartedWebhook } from './support/start-webhook';
import { createTenant, decisionEvent, uniquePrefix } from './support/harness';
import { type WebhookBed, startWebhookBed } from './support/webhook-bed';
import { type Receiver, startReceiver } from './support/https-receiver';

jest.setTimeout(60_000);

const prefix = uniquePrefix('settings');
let bed: WebhookBed;
let db: Db;
let bus: Bus;
let cert: SelfSignedCert;
let service: StartedWebhook;
const receivers: Receiver[] = [];

beforeAll(async () => {
  bed = await startWebhookBed(prefix);
  ({ db, bus, cert, service } = bed);
});

afterAll(async () => {
  await bed?.close();
  for (const r of receivers) await r.close();
});

const setSettings = (tenantId: string, settings: Record<string, unknown>) =>
  db.updateTable('tenant_settings').set({ settings: JSON.stringify(settings) }).where('tenant_id', '=', tenantId).execute();

it('a webhook set through the gateway applies to the next events once the change is published; unchanged settings are not re-read per event', async () => {
  const rx = await startReceiver(cert);
  receivers.push(rx);
  const t = await createTenant(db, { url: null, secret: null });
  expect(await service.api.deliveries.enqueueDecision(decisionEvent(t.id))).toBe('skipped');

  // written as the gateway's settings service writes it; until the change is published the cached
  // settings (no webhook) still answer: the store is not read per event
  await setSettings(t.id, { webhook_url: rx.url(), webhook_secret: t.secret || 'whsec_settings_cache_test' });
  expect(await service.api.deliveries.enqueueDecision(decisionEvent(t.id))).toBe('skipped');

  publishTenantChange(bus, 'settings', t.id);
  await bus.nc.flush();
  const until = Date.now() + 2000;
  let result = 'skipped';
  let e = decisionEvent(t.id);
  while (result === 'skipped' && Date.now() < until) {
    e = decisionEvent(t.id);
    result = await service.api.deliveries.enqueueDecision(e);
    if (result === 'skipped') await new Promise((r) => setTimeout(r, 5));
  }
  expect(result).toBe('enqueued');
  const [req] = await rx.waitFor(1);
  expect((req.json as { data: { action_id: string } }).data.action_id).toBe(e.action_id);

  // and removed again: the next events are skipped
  await setSettings(t.id, {});
  publishTenantChange(bus, 'settings', t.id);
  await bus.nc.flush();
  const until2 = Date.now() + 2000;
  do {
    result = await service.api.deliveries.enqueueDecision(decisionEvent(t.id));
    if (result !== 'skipped') await new Promise((r) => setTimeout(r, 5));
  } while (result !== 'skipped' && Date.now() < until2);
  expect(result).toBe('skipped');
});
