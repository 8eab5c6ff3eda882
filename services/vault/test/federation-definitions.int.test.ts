/**
 * Federated tool definitions pass through whole and in their key order (docs/federation.md, "Pinned
 * definitions" and "Task support"; issue 43, item 4: review findings G3 and G4) in the vault (its own
 * definition started in-process, test/support/start-vault.ts), against the real Postgres, the SoftHSM2 token
 * and real upstreams over HTTP: `@modelcontextprotocol/server-everything` from the npm registry and the
 * project's hostile upstream (a definition given as is):
 * - the catalog's definitions are the upstream's own tools/list objects byte for byte (JSON text compared),
 *   `execution`, `icons`, `_meta` and unknown fields included, in the upstream's key order at every level;
 * - a tool that requires task-augmented execution is pinned but not offered, named in the upstream's
 *   status, and a call of it is refused with the reason; an optional one is offered as "forbidden";
 * - a changed `execution` or `icons` is a changed definition (quarantined);
 * - a pin stored before (jsonb key order, the six fields pins then covered, their fingerprint) still
 *   matches, and the next read stores the whole definition in the upstream's order, without a quarantine.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type HostileUpstream, type ReferenceServer, startHostileUpstream, startServerEverything } from '@agw/mcp-fixtures';
import { sql } from 'kysely';
import type { Federation } from '../src/federation/federation';
import { legacyDefinitionSha256, legacyPinnedForm } from '../src/federation/tool-definition';
import type { Quarantine } from '../src/federation/tool-pinning';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

let vault: StartedVault;
let federation: Federation;
let everything: ReferenceServer;
let everythingUrl: string;
const hostiles: HostileUpstream[] = [];
const quarantines: Array<{ tenantId: string; upstream: string; q: Quarantine }> = [];

/** The upstream's own tools/list, read over plain HTTP and parsed with JSON.parse (which keeps key order). */
async function rawToolsList(url: string): Promise<Array<Record<string, unknown>>> {
  const post = async (body: object, session?: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const json = res.headers.get('content-type')?.includes('text/event-stream')
      ? text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .find((l) => l.includes('"result"'))
      : text;
    return { session: res.headers.get('mcp-session-id') ?? session, message: json ? (JSON.parse(json) as { result?: Record<string, unknown> }) : undefined };
  };
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-test', version: '1' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.session!);
  const tools: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  do {
    const page = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: cursor ? { cursor } : {} }, init.session!);
    tools.push(...(page.message!.result!.tools as Array<Record<string, unknown>>));
    cursor = page.message!.result!.nextCursor as string | undefined;
  } while (cursor);
  return tools;
}

const taskSupport = (t: Record<string, unknown>) => (t.execution as { taskSupport?: string } | undefined)?.taskSupport;

beforeAll(async () => {
  vault = await startVault({ env: { FEDERATION_SYNC_INTERVAL_MS: '10' }, overrides: { quarantines: { record: async (tenantId, upstream, q) => void quarantines.push({ tenantId, upstream, q }) } } });
  federation = vault.api.federation;
  everything = await startServerEverything();
  everythingUrl = everything.url;
});

afterAll(async () => {
  await vault?.close();
  await everything?.close();
  await Promise.all(hostiles.map((h) => h.close()));
});

describe('server-everything: the definitions as the upstream wrote them', () => {
  const tenant = randomUUID();
  let upstreamTools: Array<Record<string, unknown>>;

  beforeAll(async () => {
    upstreamTools = await rawToolsList(everythingUrl);
    await federation.register(tenant, { name: 'everything', url: everythingUrl });
  });

  test('every offered tool is the upstream\'s own tools/list object, byte for byte (JSON text), execution included', async () => {
    const listed = await federation.federatedTools(tenant);
    const offered = upstreamTools.filter((t) => taskSupport(t) !== 'required');
    expect(offered.length).toBeGreaterThanOrEqual(10);
    expect(listed.map((t) => t.tool).sort()).toEqual(offered.map((t) => t.name as string).sort());
    for (const t of offered) {
      const mine = listed.find((l) => l.tool === t.name)!;
      expect(mine.name).toBe(`everything__${t.name as string}`);
      // server-everything's tools say forbidden (or nothing): nothing to change, the text is the upstream's
      expect(taskSupport(t) ?? 'forbidden').toBe('forbidden');
      expect(JSON.stringify(mine.definition)).toBe(JSON.stringify(t));
    }
  });

  test('G4: get-resource-reference lists resourceType before resourceId, as the upstream does (jsonb sorted them the other way)', async () => {
    const ref = (await federation.federatedTools(tenant)).find((t) => t.tool === 'get-resource-reference')!;
    expect(Object.keys((ref.definition.inputSchema as { properties: object }).properties)).toEqual(['resourceType', 'resourceId']);
    // the stored pin is the upstream's text too (the column is json), and so is what the API shows
    const row = (await federation.tools(tenant, 'everything')).find((t) => t.name === 'get-resource-reference')!;
    expect(JSON.stringify(row.pinned)).toBe(JSON.stringify(upstreamTools.find((t) => t.name === 'get-resource-reference')));
    const structured = upstreamTools.find((t) => t.name === 'get-structured-content');
    if (structured?.outputSchema) {
      const mine = (await federation.federatedTools(tenant)).find((t) => t.tool === 'get-structured-content')!;
      expect(Object.keys((mine.definition.outputSchema as { properties: object }).properties)).toEqual(Object.keys((structured.outputSchema as { properties: object }).properties));
    }
  });

  test('G3: simulate-research-query (taskSupport "required") is pinned, not offered, named in the status, and a call of it is refused with the reason', async () => {
    expect(upstreamTools.filter((t) => taskSupport(t) === 'required').map((t) => t.name)).toEqual(['simulate-research-query']);
    const view = await federation.get(tenant, 'everything');
    expect(view.status_reason).toBe(
      '1 tool(s) not offered: they require task-augmented execution (execution.taskSupport "required"), which the gateway cannot run on an upstream yet (simulate-research-query)',
    );
    const row = view.tools!.find((t) => t.name === 'simulate-research-query')!;
    expect(row).toMatchObject({ state: 'active', pinned: expect.objectContaining({ execution: { taskSupport: 'required' } }) });
    expect((await federation.federatedTools(tenant)).map((t) => t.tool)).not.toContain('simulate-research-query');
    const target = await federation.target(tenant, 'everything', 'simulate-research-query');
    expect(target).toEqual({
      upstream: true,
      executable: false,
      violation: 'task_execution_required',
      message: 'Tool everything/simulate-research-query requires task-augmented execution (its execution.taskSupport is "required"), which the gateway cannot run on an upstream yet; it is not offered in tools/list',
    });
    const call = await federation.call(tenant, (await federation.lookup(tenant, 'everything', 'simulate-research-query'))!, { topic: 'x' });
    expect(call).toMatchObject({ outcome: 'quarantined', statusCode: 409, result: { error: target.message } });
    // the other tools run as before
    expect(await federation.target(tenant, 'everything', 'echo')).toEqual({ upstream: true, executable: true, definition_sha256: view.tools!.find((t) => t.name === 'echo')!.pinned_sha256 });
  });
});

describe('a definition with every kind of field, in an odd key order', () => {
  /** Keys in an order no sorting gives; a later revision's field; execution optional; icons; _meta. */
  const ordered = {
    title: 'Ordered',
    name: 'ordered',
    'x-later-field': { zeta: 1, alpha: [{ y: 2, b: 1 }] },
    inputSchema: {
      required: ['zeta'],
      properties: { zeta: { type: 'string', description: 'first' }, alpha: { type: 'number' }, mid: { type: 'object', properties: { z: { type: 'string' }, a: { type: 'string' } } } },
      type: 'object',
      $schema: 'https://json-schema.org/draft/2020-12/schema',
    },
    execution: { taskSupport: 'optional' },
    icons: [{ src: 'https://cdn.example.com/ordered.png', mimeType: 'image/png', sizes: ['48x48'] }],
    description: 'Lists its fields in the upstream\'s order.',
    outputSchema: { type: 'object', properties: { result: { type: 'string' }, at: { type: 'string' } } },
    annotations: { readOnlyHint: true, title: 'Ordered tool', idempotentHint: true },
    _meta: { 'io.example/z': 1, 'io.example/a': 2 },
  };
  const required = { name: 'long-job', description: 'Runs as a task only.', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } };

  test('comes back as the same text, with taskSupport "optional" offered as "forbidden" in its place', async () => {
    const tenant = randomUUID();
    const up = await startHostileUpstream({ label: 'ORDER', config: { tools: [{ kind: 'definition', definition: ordered }, { kind: 'definition', definition: required }] } });
    hostiles.push(up);
    expect(JSON.stringify((await rawToolsList(up.mcpUrl)).find((t) => t.name === 'ordered'))).toBe(JSON.stringify(ordered));
    const view = await federation.register(tenant, { name: 'ord', url: up.mcpUrl });
    expect(view.status_reason).toMatch(/1 tool\(s\) not offered: .*\(long-job\)$/);
    expect(JSON.stringify(view.tools!.find((t) => t.name === 'ordered')!.pinned)).toBe(JSON.stringify(ordered));
    const listed = await federation.federatedTools(tenant);
    expect(listed.map((t) => t.name)).toEqual(['ord__ordered']);
    expect(JSON.stringify(listed[0].definition)).toBe(JSON.stringify({ ...ordered, execution: { taskSupport: 'forbidden' } }));
    expect(Object.keys(listed[0].definition)).toEqual(Object.keys(ordered));
    expect(await federation.target(tenant, 'ord', 'long-job')).toMatchObject({ executable: false, violation: 'task_execution_required' });
  });

  test.each([
    ['execution', { ...ordered, execution: { taskSupport: 'required' } }, 'execution.taskSupport'],
    ['icons', { ...ordered, icons: [{ src: 'https://evil.example/other.png' }] }, 'icons[0].src'],
  ])('a changed %s is a changed definition: quarantined, the pin kept', async (_field, changed, path) => {
    const tenant = randomUUID();
    const up = await startHostileUpstream({ label: 'CHANGE', config: { tools: [{ kind: 'definition', definition: ordered }] } });
    hostiles.push(up);
    await federation.register(tenant, { name: 'chg', url: up.mcpUrl });
    await up.configure({ tools: [{ kind: 'definition', definition: changed }] }, { notify: false });
    const view = await federation.refresh(tenant, 'chg');
    const row = view.tools!.find((t) => t.name === 'ordered')!;
    expect(row).toMatchObject({ state: 'quarantined', reason: 'tool_definition_changed' });
    expect(JSON.stringify(row.pinned)).toBe(JSON.stringify(ordered));
    expect(JSON.stringify(row.candidate)).toBe(JSON.stringify(changed));
    expect(quarantines.filter((q) => q.tenantId === tenant).map((q) => q.q.diff.map((d) => d.path))).toEqual([expect.arrayContaining([path])]);
    expect(await federation.federatedTools(tenant)).toEqual([]);
  });
});

describe('pins stored before this change', () => {
  test('a jsonb-ordered pin of the six fields (and its fingerprint) still matches; the next read stores the whole definition in the upstream order, no quarantine', async () => {
    const tenant = randomUUID();
    const up = await startHostileUpstream({ label: 'LEGACY', config: { tools: [{ kind: 'definition', definition: { ...{ name: 'ordered' }, ...legacyless() } }] } });
    hostiles.push(up);
    await federation.register(tenant, { name: 'old', url: up.mcpUrl });
    const fresh = (await federation.tools(tenant, 'old'))[0];
    // what the release before stored: the six-field form, its fingerprint, in jsonb's key order (the text jsonb gives back)
    const legacy = legacyPinnedForm(fresh.pinned);
    await sql`UPDATE federation_tools SET pinned = (${JSON.stringify(legacy)}::jsonb)::json, pinned_sha256 = ${legacyDefinitionSha256(fresh.pinned)}
              WHERE tenant_id = ${tenant} AND upstream = 'old' AND name = 'ordered'`.execute(vault.api.db);
    const before = (await federation.tools(tenant, 'old'))[0];
    expect(Object.keys(before.pinned!)).not.toEqual(Object.keys(legacy));
    expect(before.pinned_sha256).not.toBe(fresh.pinned_sha256);
    const view = await federation.refresh(tenant, 'old');
    const after = view.tools![0];
    expect(after).toMatchObject({ state: 'active', reason: null, candidate: null, pinned_sha256: fresh.pinned_sha256 });
    expect(JSON.stringify(after.pinned)).toBe(JSON.stringify(fresh.pinned));
    expect(quarantines.filter((q) => q.tenantId === tenant)).toEqual([]);
  });
});

/** The odd-order definition's fields after its name (name first, as most upstreams write it). */
function legacyless(): Record<string, unknown> {
  return {
    description: 'An old pin.',
    inputSchema: { type: 'object', properties: { resourceType: { type: 'string' }, resourceId: { type: 'number' } }, required: ['resourceType', 'resourceId'] },
    annotations: { readOnlyHint: true, title: 'Old' },
    execution: { taskSupport: 'forbidden' },
    icons: [{ src: 'https://cdn.example.com/old.png' }],
  };
}
