/**
 * Federation of the vault (its own definition started in-process, test/support/start-vault.ts) against the
 * real Postgres, the SoftHSM2 token and a real upstream MCP server from the npm registry (`@modelcontextprotocol/server-everything`, Streamable HTTP): registration reads and pins the
 * tools, a call goes through the brokered executor to the upstream and back unchanged, the egress rule
 * refuses what is not allowed, tenants never see each other's upstreams.
 */
import { randomUUID } from 'node:crypto';
import { type ReferenceServer, startServerEverything } from '@agw/mcp-fixtures';
import { freeLoopbackPort } from '@agw/shared';
import type { Federation } from '../src/federation/federation';
import type { Quarantine } from '../src/federation/tool-pinning';
import type { BrokeredExecutor } from '../src/broker/brokered-executor';
import { testFederation } from './helpers';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

let vault: StartedVault;
let federation: Federation;
let broker: BrokeredExecutor;
let upstream: ReferenceServer;
let url: string;
const quarantines: Array<{ tenantId: string; upstream: string; q: Quarantine }> = [];
const changes: string[] = [];

async function callOn(tenantId: string, upstream: string, tool: string, args: Record<string, unknown>) {
  return federation.call(tenantId, (await federation.lookup(tenantId, upstream, tool))!, args);
}

beforeAll(async () => {
  vault = await startVault({
    overrides: {
      quarantines: { record: async (tenantId, name, q) => void quarantines.push({ tenantId, upstream: name, q }) },
      changed: (tenantId) => changes.push(tenantId),
    },
  });
  ({ federation, broker } = vault.api);
  upstream = await startServerEverything();
  url = upstream.url;
});

afterAll(async () => {
  await vault?.close();
  await upstream?.close();
});

describe('federation of a real MCP server', () => {
  const tenant = randomUUID();

  test('registration connects, reads every tool with its schema, pins each definition and says the catalog changed', async () => {
    const view = await federation.register(tenant, { name: 'everything', url });
    // its one tool that requires task-augmented execution is pinned but not offered (federation-definitions.int.test.ts)
    expect(view).toMatchObject({ name: 'everything', status: 'connected', status_reason: expect.stringMatching(/^1 tool\(s\) not offered: they require task-augmented execution .*\(simulate-research-query\)$/), transport: 'streamable_http' });
    const echo = view.tools!.find((t) => t.name === 'echo')!;
    expect(echo).toMatchObject({ state: 'active', reason: null });
    expect(echo.pinned_sha256).toMatch(/^[0-9a-f]{64}$/);
    // a governed call's target names the pinned definition (the record's details.definition_sha256, the receipt's `definition`)
    expect(await federation.target(tenant, 'everything', 'echo')).toEqual({ upstream: true, executable: true, definition_sha256: echo.pinned_sha256 });
    expect((echo.pinned as { inputSchema: { properties: object } }).inputSchema.properties).toHaveProperty('message');
    expect(view.tools!.every((t) => t.state === 'active')).toBe(true);
    expect(quarantines).toEqual([]);
    expect(changes).toContain(tenant);
    const listed = await federation.federatedTools(tenant);
    expect(listed.map((t) => t.name)).toContain('everything__echo');
  });

  test('an allowed call runs on the upstream through the brokered executor and comes back unchanged', async () => {
    const out = await broker.execute(tenant, { actionId: randomUUID(), agentId: 'agent-1', tool: 'everything', method: 'echo', params: { message: 'hello upstream' }, origin: 'tool_call' });
    expect(out.statusCode).toBe(200);
    expect(out).toMatchObject({ brokered: true, mcpResult: true, outcome: 'executed', credentialName: 'upstream:everything' });
    const result = out.body as { content: Array<{ type: string; text: string }> };
    expect(result.content[0]).toEqual({ type: 'text', text: 'Echo: hello upstream' });
    const image = await callOn(tenant, 'everything', 'get-tiny-image', {});
    expect(image.outcome).toBe('executed');
    expect((image.result as { content: Array<{ type: string }> }).content.map((c) => c.type)).toContain('image');
  });

  test('a tool the upstream does not offer is refused before any request; another tenant sees nothing', async () => {
    expect(await federation.target(tenant, 'everything', 'no-such-tool')).toMatchObject({ upstream: true, executable: false, violation: 'upstream_tool_unknown' });
    const other = randomUUID();
    expect(await federation.target(other, 'everything', 'echo')).toEqual({ upstream: false, executable: false });
    expect(await federation.federatedTools(other)).toEqual([]);
    await expect(federation.get(other, 'everything')).rejects.toMatchObject({ code: 'not_found' });
  });

  test('a name taken is a conflict; bad input names the field', async () => {
    await expect(federation.register(tenant, { name: 'everything', url })).rejects.toMatchObject({ code: 'conflict' });
    await expect(federation.register(tenant, { name: 'a__b', url })).rejects.toMatchObject({ detail: [expect.objectContaining({ loc: ['name'] })] });
    await expect(federation.register(tenant, { name: 'x', url: 'ftp://127.0.0.1/mcp' })).rejects.toMatchObject({ detail: [expect.objectContaining({ loc: ['url'] })] });
  });

  test('the egress rule refuses an address outside the allowed ranges', async () => {
    // a second federation over the same vault's stores with another egress rule
    const strict = testFederation(vault.api, { config: { upstreamAllowCidrs: [] } });
    await expect(strict.federation.register(randomUUID(), { name: 'loop', url })).rejects.toMatchObject({ detail: [expect.objectContaining({ loc: ['url'], msg: expect.stringMatching(/loopback/) })] });
    await strict.close();
  });

  test('an upstream that is down is registered in error with a reason, and deleting closes it', async () => {
    const t = randomUUID();
    const view = await federation.register(t, { name: 'down', url: `http://127.0.0.1:${await freeLoopbackPort()}/mcp` });
    expect(view.status).toBe('error');
    expect(view.status_reason).toMatch(/unreachable|ECONNREFUSED/);
    const call = await callOn(t, 'down', 'echo', {});
    expect(call.outcome).not.toBe('executed');
    await federation.delete(t, 'down');
    await expect(federation.get(t, 'down')).rejects.toMatchObject({ code: 'not_found' });
  });
});
