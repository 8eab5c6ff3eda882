/**
 * What one tenant's upstream can make the vault do is bounded (docs/federation.md, "Connections and
 * limits"), in federations with their own limits over the stores of a vault started in-process
 * (test/support/start-vault.ts), against the real Postgres, the SoftHSM2 token and the project's MCP fixtures over real HTTP:
 * reads of an upstream's tools in a budget per upstream (a list_changed flood is a few reads, a refresh
 * beyond it is 429), a definition over the byte cap is refused and named, a tenant's upstream count is
 * capped, and an upstream that flaps between two definitions is recorded once per tool and window.
 */
import { randomUUID } from 'node:crypto';
import { type Fixtures, startFixtures, startHostileUpstream } from '@agw/mcp-fixtures';
import { freeLoopbackPort } from '@agw/shared';
import type { FederationWiring } from '../src/federation/create-federation';
import type { Quarantine } from '../src/federation/tool-pinning';
import { testConfig, testFederation } from './helpers';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

let vault: StartedVault;
let fx: Fixtures;
const open: FederationWiring[] = [];

beforeAll(async () => {
  vault = await startVault();
  fx = await startFixtures({ port: await freeLoopbackPort() });
});

afterAll(async () => {
  await Promise.all(open.map((w) => w.close()));
  await fx?.close();
  await vault?.close();
});

/** A federation of its own over the started vault's stores, with these limits, that counts the reads (syncs) and records the quarantines. */
function federationWith(limits: Partial<ReturnType<typeof testConfig>>) {
  const syncs: string[] = [];
  const quarantines: Array<{ upstream: string; q: Quarantine; suppressed?: number }> = [];
  const wiring = testFederation(vault.api, { config: limits, quarantines: async (_t, upstream, q, suppressed) => void quarantines.push({ upstream, q, suppressed }), changed: (tenantId) => syncs.push(tenantId) });
  open.push(wiring);
  return { federation: wiring.federation, syncs, quarantines };
}

const control = async (path: string, body: Record<string, unknown> = {}) => {
  const res = await fetch(`${fx.url}/control/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
};

const until = async (what: () => boolean | Promise<boolean>, ms = 15_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (await what()) return;
  throw new Error('condition not reached in time');
};

describe('bounded federation work', () => {
  afterEach(() => control('mutable/reset'));

  test('a list_changed flood is a few reads of the upstream, the last one sees the final list', async () => {
    const { federation, syncs } = federationWith({ federationSyncBurst: 2, federationSyncIntervalMs: 1500 });
    const tenant = randomUUID();
    await federation.register(tenant, { name: 'flood', url: `${fx.url}/mutable/mcp` });
    // the registration's read took one token; the connection's standalone stream must be open to get notices
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    for (let i = 0; i < 30; i++) await control('mutable/add-tool', { name: `t${i}` });
    await until(async () => (await federation.tools(tenant, 'flood')).some((t) => t.name === 't29'));
    const elapsed = Date.now() - t0;
    // 30 notices: one read on the burst's last token, then at most one per interval (each one coalescing all that came)
    const reads = syncs.filter((t) => t === tenant).length - 1;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 1500) + 1);
    expect(reads).toBeLessThan(30);
  });

  test('a refresh beyond the upstream\'s budget is refused with the wait; another upstream has its own', async () => {
    const { federation } = federationWith({ federationSyncBurst: 2, federationSyncIntervalMs: 60_000 });
    const tenant = randomUUID();
    await federation.register(tenant, { name: 'busy', url: `${fx.url}/mutable/mcp` });
    await federation.refresh(tenant, 'busy');
    const refused = await federation.refresh(tenant, 'busy').catch((e) => e);
    expect(refused).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/may be read again in \d+ s/) });
    expect(refused.retryAfterSeconds).toBeGreaterThan(0);
    await expect(federation.register(tenant, { name: 'other', url: `${fx.url}/mutable/mcp` })).resolves.toMatchObject({ status: 'connected' });
  });

  test('a tenant registers at most FEDERATION_MAX_UPSTREAMS upstreams', async () => {
    const { federation } = federationWith({ federationMaxUpstreams: 2 });
    const tenant = randomUUID();
    await federation.register(tenant, { name: 'one', url: `${fx.url}/mutable/mcp` });
    await federation.register(tenant, { name: 'two', url: `${fx.url}/mutable/mcp` });
    await expect(federation.register(tenant, { name: 'three', url: `${fx.url}/mutable/mcp` })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('FEDERATION_MAX_UPSTREAMS'),
    });
    // another tenant is not counted against this one
    await expect(federation.register(randomUUID(), { name: 'three', url: `${fx.url}/mutable/mcp` })).resolves.toMatchObject({ status: 'connected' });
  });

  test('a definition over FEDERATION_MAX_TOOL_BYTES is refused, named, never stored; the others stay', async () => {
    const { federation, quarantines } = federationWith({ federationMaxToolBytes: 4096 });
    const tenant = randomUUID();
    await control('mutable/describe', { tool: 'weather', description: 'w'.repeat(5000) });
    const view = await federation.register(tenant, { name: 'big', url: `${fx.url}/mutable/mcp` });
    expect(view.status).toBe('connected');
    expect(view.status_reason).toMatch(/1 tool\(s\) refused: a definition is larger than FEDERATION_MAX_TOOL_BYTES or nests deeper than 64 levels \(weather \d+ bytes\)/);
    expect(view.tools!.map((t) => t.name)).not.toContain('weather');
    expect(view.tools!.map((t) => t.name)).toContain('add');
    expect(quarantines).toEqual([]);
  });

  test('a definition nested deeper than 64 levels is refused and named, even 10,000 levels that no recursive reader survives', async () => {
    const { federation } = federationWith({});
    const up = await startHostileUpstream({ config: { tools: [{ kind: 'nested', name: 'deep', depth: 10_000, compact: true }, { kind: 'nested', name: 'fine', depth: 20 }, { kind: 'plain', name: 'ok' }] } });
    try {
      const view = await federation.register(randomUUID(), { name: 'nest', url: up.mcpUrl });
      expect(view.status).toBe('connected');
      expect(view.status_reason).toMatch(/1 tool\(s\) refused: .*\(deep nested deeper than 64 levels\)/);
      expect(view.tools!.map((t) => [t.name, t.state])).toEqual(expect.arrayContaining([['fine', 'active'], ['ok', 'active']]));
      expect(view.tools!.map((t) => t.name)).not.toContain('deep');
    } finally {
      await up.close();
    }
  });

  test('a read stops at FEDERATION_MAX_SYNC_BYTES and says so', async () => {
    const { federation } = federationWith({ federationMaxSyncBytes: 20_000 });
    const view = await federation.register(randomUUID(), { name: 'many', url: `${fx.url}/many/mcp` });
    expect(view.status_reason).toMatch(/larger than FEDERATION_MAX_SYNC_BYTES \(20000 bytes in one read\)/);
    expect(view.tools!.length).toBeGreaterThan(0);
    expect(view.tools!.length).toBeLessThan(500);
  });

  test('an upstream that flaps between two definitions is recorded once per tool and window; an approval opens a new one', async () => {
    const { federation, quarantines } = federationWith({ federationSyncBurst: 100, federationSyncIntervalMs: 10 });
    const tenant = randomUUID();
    await federation.register(tenant, { name: 'flap', url: `${fx.url}/mutable/mcp` });
    const original = (await federation.tools(tenant, 'flap')).find((t) => t.name === 'weather')!.pinned as { description: string };
    for (let i = 0; i < 4; i++) {
      await control('mutable/describe', { tool: 'weather', description: `Changed weather ${i % 2}.` });
      await federation.refresh(tenant, 'flap');
      expect((await federation.tools(tenant, 'flap')).find((t) => t.name === 'weather')!.state).toBe('quarantined');
      await control('mutable/describe', { tool: 'weather', description: original.description });
      await federation.refresh(tenant, 'flap');
      expect((await federation.tools(tenant, 'flap')).find((t) => t.name === 'weather')!.state).toBe('active');
    }
    expect(quarantines.filter((r) => r.upstream === 'flap')).toHaveLength(1);
    await control('mutable/describe', { tool: 'weather', description: 'Approved change.' });
    await federation.refresh(tenant, 'flap');
    await federation.approve(tenant, 'flap', 'weather', 'human@example.com');
    await control('mutable/describe', { tool: 'weather', description: 'A change after the approval.' });
    await federation.refresh(tenant, 'flap');
    const recorded = quarantines.filter((r) => r.upstream === 'flap');
    expect(recorded).toHaveLength(2);
    // the record after the approval says how many quarantines were not recorded: at least the 3 later flaps and the
    // approved change (the fixture's list_changed notices may add reads of their own)
    expect(recorded[1].suppressed).toBeGreaterThanOrEqual(4);
  });
});
