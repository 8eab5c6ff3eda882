/**
 * The broker's credential cache across two gateway replicas on real NATS (two connections), with an
 * in-memory vault in place of the vault service: the replica that registers or deletes a credential sees
 * it on its very next call; the other replica sees it as soon as the change message arrives, and at the
 * latest after the TTL; steady traffic asks the vault once per (tenant, tool) and TTL.
 */
import { randomUUID } from 'node:crypto';
import { TEST_NATS_URL, TenantCache, changeSubject, onTenantChange } from '@agw/shared';
import { type NatsConnection, connect } from 'nats';
import type { VaultClient } from '../src/clients/grpc-clients';
import { credentialChanges } from '../src/vault/credential-changes';
import { createVaultBroker } from '../src/vault/vault-broker';
const prefix = `CRC${randomUUID().replace(/-/g, '').slice(0, 10)}`;
const conns: NatsConnection[] = [];

/** The vault service's credential table, shared by the replicas as the real one is. */
function memoryVault() {
  const creds = new Set<string>();
  const k = (tenantId: string, toolId: string) => `${tenantId}/${toolId}`;
  let lookups = 0;
  let delay = 0;
  const vault = {
    getCredentialStatus: async ({ tenant_id: tenantId, tool_id: toolId }: { tenant_id: string; tool_id: string }) => {
      lookups += 1;
      const registered = creds.has(k(tenantId, toolId)); // read when asked, answered after `delay`
      if (delay) await new Promise((r) => setTimeout(r, delay));
      return { tool_id: toolId, registered, name: '', credential_type: '', registered_at: '' };
    },
    registerCredential: async ({ tenant_id: tenantId, tool_id: toolId, name }: { tenant_id: string; tool_id: string; name: string }) => {
      creds.add(k(tenantId, toolId));
      return { tool_id: toolId, name };
    },
    deleteCredential: async ({ tenant_id: tenantId, tool_id: toolId, name }: { tenant_id: string; tool_id: string; name: string }) => {
      creds.delete(k(tenantId, toolId));
      return { tool_id: toolId, name };
    },
  } as unknown as VaultClient;
  return {
    vault,
    lookups: () => lookups,
    setDelay: (ms: number) => {
      delay = ms;
    },
  };
}

async function replica(vault: VaultClient) {
  const nc = await connect({ servers: TEST_NATS_URL });
  conns.push(nc);
  const changes = credentialChanges(vault, { nc, prefix });
  await nc.flush(); // the subscription is registered with the server
  return { vault: changes.vault, broker: createVaultBroker(changes.vault, changes.cache) };
}

async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return Date.now() - t0;
}

afterAll(async () => {
  for (const nc of conns) await nc.drain().catch(() => undefined);
});

const reg = (tenantId: string, toolId: string) => ({ tenant_id: tenantId, tool_id: toolId, name: 'n', value: 'v', credential_type: '', upstream_url: '', upstream_method: '', header_name: '' });

test('steady calls ask the vault once per (tenant, tool); another tenant or tool is its own entry', async () => {
  const mem = memoryVault();
  const a = await replica(mem.vault);
  const tenant = randomUUID();
  for (let i = 0; i < 50; i++) expect(await a.broker.hasCredential!(tenant, 'svc_a')).toBe(false);
  expect(mem.lookups()).toBe(1);
  await a.broker.hasCredential!(tenant, 'svc_b');
  await a.broker.hasCredential!(randomUUID(), 'svc_a');
  expect(mem.lookups()).toBe(3);
});

test('a registration is seen by the next call on its replica and, through NATS, on the other replica long before the TTL', async () => {
  const mem = memoryVault();
  const a = await replica(mem.vault);
  const b = await replica(mem.vault);
  const tenant = randomUUID();
  const other = randomUUID();
  expect(await a.broker.hasCredential!(tenant, 'svc_crm')).toBe(false);
  expect(await b.broker.hasCredential!(tenant, 'svc_crm')).toBe(false);
  expect(await b.broker.hasCredential!(other, 'svc_crm')).toBe(false);

  await a.vault.registerCredential(reg(tenant, 'svc_crm'));
  // the registering replica: the very next call, no waiting
  expect(await a.broker.hasCredential!(tenant, 'svc_crm')).toBe(true);
  // the other replica: when the change message arrives (well under the TTL)
  const took = await eventually(async () => (await b.broker.hasCredential!(tenant, 'svc_crm')) === true, 2000);
  expect(took).toBeLessThan(2000);
  // only that tenant's entries were dropped
  const before = mem.lookups();
  expect(await b.broker.hasCredential!(other, 'svc_crm')).toBe(false);
  expect(mem.lookups()).toBe(before);

  // a deletion on the other replica, the same way round
  await b.vault.deleteCredential({ tenant_id: tenant, tool_id: 'svc_crm', name: 'n' });
  expect(await b.broker.hasCredential!(tenant, 'svc_crm')).toBe(false);
  await eventually(async () => (await a.broker.hasCredential!(tenant, 'svc_crm')) === false, 2000);
});

test('a lookup in flight when the credential is registered is not kept', async () => {
  const mem = memoryVault();
  const a = await replica(mem.vault);
  const tenant = randomUUID();
  mem.setDelay(100);
  const inFlight = a.broker.hasCredential!(tenant, 'svc_x'); // reads "none", answers 100 ms later
  await new Promise((r) => setTimeout(r, 20));
  await a.vault.registerCredential(reg(tenant, 'svc_x'));
  expect(await inFlight).toBe(false); // that call started before the registration
  mem.setDelay(0);
  expect(await a.broker.hasCredential!(tenant, 'svc_x')).toBe(true);
});

test('a change published by any process drops the entries; without a message, the TTL does', async () => {
  const nc = await connect({ servers: TEST_NATS_URL });
  conns.push(nc);
  const seen: Array<string | undefined> = [];
  onTenantChange({ nc, prefix }, 'credentials', (t) => seen.push(t));
  await nc.flush();
  const tenant = randomUUID();
  nc.publish(changeSubject(prefix, 'credentials', tenant));
  nc.publish(changeSubject(`${prefix}X`, 'credentials', tenant)); // another fleet's change: not ours
  await eventually(async () => seen.length > 0, 2000);
  await nc.flush();
  expect(seen).toEqual([tenant]);

  const cache = new TenantCache<number>(150);
  let loads = 0;
  const load = async () => ++loads;
  expect(await cache.get(tenant, 'k', load)).toBe(1);
  expect(await cache.get(tenant, 'k', load)).toBe(1);
  await new Promise((r) => setTimeout(r, 200));
  expect(await cache.get(tenant, 'k', load)).toBe(2);
  // a failed load is not kept
  await expect(cache.get(tenant, 'f', async () => Promise.reject(new Error('vault down')))).rejects.toThrow('vault down');
  expect(await cache.get(tenant, 'f', load)).toBe(3);
});
