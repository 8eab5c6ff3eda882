/**
 * Resources, prompts and completions of a federated upstream (federated-mcp.ts) in the vault (its own definition
 * started in-process, test/support/start-vault.ts), against the real Postgres, the SoftHSM2 token and the real
 * `@modelcontextprotocol/server-everything` (Streamable HTTP): its prompts are pinned in the catalog beside its tools (and quarantined when they change), its resources and
 * templates are listed live, resources/read and prompts/get run through the brokered executor as governed
 * calls (method `resources/read` / `prompts/get`), and completion/complete reaches the prompt's upstream.
 * Then an SDK `McpServer` of resources and prompts only (no tools) that echoes the request's credential:
 * its lists, reads and prompts come back masked.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { type ReferenceServer, startServerEverything } from '@agw/mcp-fixtures';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import type { FederationWiring } from '../src/federation/create-federation';
import type { Federation } from '../src/federation/federation';
import { PROMPT_PREFIX, promptDefinition, promptOf } from '../src/federation/federated-mcp';
import { UpstreamRepository } from '../src/federation/upstream.repository';
import type { BrokeredExecutor } from '../src/broker/brokered-executor';
import { testFederation } from './helpers';
import { type StartedVault, startVault } from './support/start-vault';

jest.setTimeout(60_000);

let vault: StartedVault;
let federation: Federation;
let broker: BrokeredExecutor;
let upstream: ReferenceServer;
let url: string;

beforeAll(async () => {
  vault = await startVault();
  ({ federation, broker } = vault.api);
  upstream = await startServerEverything();
  url = upstream.url;
});

afterAll(async () => {
  await vault?.close();
  await upstream?.close();
});

/** An SDK McpServer over stateless Streamable HTTP on loopback, made per request by `build` (which sees the request); its URL ends in /mcp. */
async function serveMcp(name: string, build: (mcp: McpServer, req: http.IncomingMessage) => void): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(async (req, res) => {
    const mcp = new McpServer({ name, version: '1.0.0' });
    build(mcp, req);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => void transport.handleRequest(req, res, body ? JSON.parse(body) : undefined));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp` };
}

const exec = (tenantId: string, method: string, params: Record<string, unknown>) =>
  broker.execute(tenantId, { actionId: randomUUID(), agentId: 'agent-1', tool: 'everything', method, params, origin: 'tool_call' });

describe('a prompt as a pinned definition', () => {
  test('the whole prompt survives the round trip, every field in its order', () => {
    const p = { title: 'Args', name: 'args-prompt', description: 'two args', arguments: [{ name: 'city', description: 'the city', required: true }, { name: 'state' }], _meta: { z: 1, a: 2 } };
    const def = promptDefinition(p);
    expect(def.name).toBe(`${PROMPT_PREFIX}args-prompt`);
    expect(Object.keys(def)).toEqual(['title', 'name', 'description', 'arguments', '_meta', 'inputSchema']);
    const back = promptOf(def as unknown as Record<string, unknown>);
    expect(back).toEqual(p);
    expect(JSON.stringify(back)).toBe(JSON.stringify(p));
  });
});

describe('resources, prompts and completions of server-everything', () => {
  const tenant = randomUUID();
  const other = randomUUID();

  beforeAll(async () => {
    const view = await federation.register(tenant, { name: 'everything', url });
    expect(view.status).toBe('connected');
  });

  test('its prompts are pinned in the catalog beside its tools, active, and not listed as tools', async () => {
    const view = await federation.get(tenant, 'everything');
    const prompts = view.tools!.filter((t) => t.name.startsWith(PROMPT_PREFIX));
    expect(prompts.map((t) => t.name)).toEqual(expect.arrayContaining(['prompt:simple-prompt', 'prompt:args-prompt', 'prompt:completable-prompt']));
    expect(prompts.every((t) => t.state === 'active' && /^[0-9a-f]{64}$/.test(t.pinned_sha256 ?? ''))).toBe(true);
    expect((await federation.federatedTools(tenant)).some((t) => t.tool.startsWith(PROMPT_PREFIX))).toBe(false);
    const listed = await federation.mcp.entries(tenant, 'prompts');
    const args = listed.entries.find((e) => (e.entry as { name: string }).name === 'args-prompt');
    expect(args).toMatchObject({ upstream: 'everything', entry: { name: 'args-prompt', arguments: [{ name: 'city', required: true }, { name: 'state' }] } });
  });

  test('resources and templates are listed live; another tenant sees none', async () => {
    const resources = await federation.mcp.entries(tenant, 'resources');
    expect(resources.unavailable).toEqual([]);
    expect(resources.entries.some((e) => String((e.entry as { uri: string }).uri).startsWith('demo://resource/static/document/'))).toBe(true);
    const templates = await federation.mcp.entries(tenant, 'resource_templates');
    expect(templates.entries.map((e) => (e.entry as { uriTemplate: string }).uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}');
    expect((await federation.mcp.entries(other, 'resources')).entries).toEqual([]);
    expect((await federation.mcp.entries(other, 'prompts')).entries).toEqual([]);
  });

  test('resources/read and prompts/get run through the brokered executor as governed calls of the upstream', async () => {
    const read = await exec(tenant, 'resources/read', { uri: 'demo://resource/dynamic/text/7' });
    expect(read).toMatchObject({ brokered: true, mcpResult: true, outcome: 'executed', statusCode: 200 });
    const contents = (read.body as { contents: Array<{ uri: string; text: string }> }).contents;
    expect(contents[0].uri).toBe('demo://resource/dynamic/text/7');
    expect(contents[0].text).toContain('7');
    const got = await exec(tenant, 'prompts/get', { prompt: 'args-prompt', arguments: { city: 'Lyon' } });
    expect(got).toMatchObject({ outcome: 'executed', statusCode: 200 });
    expect(JSON.stringify((got.body as { messages: unknown[] }).messages)).toContain('Lyon');
    const missing = await exec(tenant, 'prompts/get', { prompt: 'no-such-prompt', arguments: {} });
    expect(missing).toMatchObject({ outcome: 'upstream_error', statusCode: 502 });
    const unknownResource = await exec(tenant, 'resources/read', { uri: 'demo://resource/nothing/here' });
    expect(unknownResource.outcome).toBe('upstream_error');
    // the catalog's prompt row is not a tool: a tools/call of it is refused
    expect(await federation.target(tenant, 'everything', 'prompt:simple-prompt')).toMatchObject({ upstream: true, executable: false, violation: 'upstream_tool_unknown' });
    // another tenant has no such upstream
    expect((await federation.target(other, 'everything', 'resources/read')).upstream).toBe(false);
  });

  test('a quarantined prompt is neither listed nor run; approving it brings it back', async () => {
    const repo = new UpstreamRepository(vault.api.db);
    const row = (await repo.tool(tenant, 'everything', 'prompt:simple-prompt'))!;
    await repo.writeTools(tenant, 'everything', [
      { name: row.name, state: 'quarantined', reason: 'tool_definition_changed', markers: [], pinned: row.pinned, pinned_sha256: row.pinned_sha256, candidate: row.pinned, candidate_sha256: row.pinned_sha256 },
    ]);
    federation.invalidate(tenant);
    expect((await federation.mcp.entries(tenant, 'prompts')).entries.some((e) => (e.entry as { name: string }).name === 'simple-prompt')).toBe(false);
    const refused = await exec(tenant, 'prompts/get', { prompt: 'simple-prompt', arguments: {} });
    expect(refused).toMatchObject({ outcome: 'quarantined', statusCode: 409 });
    expect((refused.body as { error: string }).error).toMatch(/quarantined.*approve/);
    await federation.approve(tenant, 'everything', 'prompt:simple-prompt', 'reviewer');
    expect((await exec(tenant, 'prompts/get', { prompt: 'simple-prompt', arguments: {} })).outcome).toBe('executed');
  });

  test('completion/complete reaches the prompt of the upstream; a prompt it does not have is NOT_FOUND', async () => {
    const r = (await federation.mcp.complete(tenant, 'everything', { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } })) as { completion: { values: string[] } };
    expect(r.completion.values).toEqual(['Engineering']);
    const t = (await federation.mcp.complete(tenant, 'everything', { ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '1' } })) as { completion: { values: string[] } };
    expect(Array.isArray(t.completion.values)).toBe(true);
    await expect(federation.mcp.complete(tenant, 'everything', { ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } })).rejects.toThrow(/no active prompt/);
    await expect(federation.mcp.complete(other, 'everything', { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } })).rejects.toThrow(/not found/);
  });
});

describe('the secrets of an upstream never come back through its resources and prompts', () => {
  const SECRET = 'resource-SECRET-5e2d8c1a7b';
  const tenant = randomUUID();
  let server: http.Server;

  /** An SDK McpServer (stateless Streamable HTTP) whose resources and prompts echo the request's Authorization header. */
  beforeAll(async () => {
    let url: string;
    ({ server, url } = await serveMcp('echoing-upstream', (mcp, req) => {
      const auth = String(req.headers.authorization ?? '');
      mcp.registerResource(`doc ${auth}`, 'echo://doc', { description: `sent ${auth}` }, async (uri, extra) => ({
        contents: [{ uri: uri.href, text: `the header was ${String(extra.requestInfo?.headers.authorization)}` }],
      }));
      mcp.registerPrompt('echo-prompt', { description: 'echoes', argsSchema: { topic: z.string() } }, ({ topic }, extra) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `${topic}: ${String(extra.requestInfo?.headers.authorization)}` } }],
      }));
    }));
    const view = await federation.register(tenant, { name: 'echoing', url, credential: { type: 'bearer', value: SECRET } });
    // a server of resources and prompts only (no tools capability) is an upstream too
    expect([view.status, view.status_reason]).toEqual(['connected', null]);
    expect(view.tools!.map((t) => [t.name, t.state])).toEqual([['prompt:echo-prompt', 'active']]);
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  test('a resource list, a read and a prompt that echo the credential come back masked', async () => {
    const listed = await federation.mcp.entries(tenant, 'resources');
    expect(listed.entries).toHaveLength(1);
    expect(JSON.stringify(listed.entries)).not.toContain(SECRET);
    expect(JSON.stringify(listed.entries)).toContain('Bearer');
    const read = await broker.execute(tenant, { actionId: randomUUID(), agentId: 'a', tool: 'echoing', method: 'resources/read', params: { uri: 'echo://doc' }, origin: 'tool_call' });
    expect(read.outcome).toBe('executed');
    expect(JSON.stringify(read.body)).toContain('the header was Bearer ');
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
    const got = await broker.execute(tenant, { actionId: randomUUID(), agentId: 'a', tool: 'echoing', method: 'prompts/get', params: { prompt: 'echo-prompt', arguments: { topic: 'auth' } }, origin: 'tool_call' });
    expect(got.outcome).toBe('executed');
    expect(JSON.stringify(got.body)).toContain('auth: Bearer ');
    expect(JSON.stringify(got.body)).not.toContain(SECRET);
  });
});

describe('the lists are bounded as tools/list is', () => {
  const tenant = randomUUID();
  let server: http.Server;
  let small: FederationWiring;

  beforeAll(async () => {
    let url: string;
    ({ server, url } = await serveMcp('big-upstream', (mcp) => {
      for (let i = 0; i < 100; i++) mcp.registerResource(`doc-${i}`, `big://doc/${i}`, { description: 'x'.repeat(100) }, async (uri) => ({ contents: [{ uri: uri.href, text: String(i) }] }));
      mcp.registerPrompt('small', { description: 'fine' }, () => ({ messages: [] }));
      mcp.registerPrompt('huge', { description: 'y'.repeat(5000) }, () => ({ messages: [] }));
    }));
    // a second federation over the same vault's stores with smaller limits
    small = testFederation(vault.api, { config: { federationMaxSyncBytes: 4000, federationMaxToolBytes: 2000 } });
    const view = await small.federation.register(tenant, { name: 'big', url });
    expect(view.status).toBe('connected');
  });

  afterAll(async () => {
    await small?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  test('a resource list stops at FEDERATION_MAX_SYNC_BYTES; a prompt over FEDERATION_MAX_TOOL_BYTES is not kept', async () => {
    const listed = await small.federation.mcp.entries(tenant, 'resources');
    expect(listed.entries.length).toBeGreaterThan(5);
    expect(listed.entries.length).toBeLessThan(100);
    expect(Buffer.byteLength(JSON.stringify(listed.entries.map((e) => e.entry)))).toBeLessThanOrEqual(4000 + 200);
    const prompts = await small.federation.mcp.entries(tenant, 'prompts');
    expect(prompts.entries.map((e) => (e.entry as { name: string }).name)).toEqual(['small']);
  });
});
