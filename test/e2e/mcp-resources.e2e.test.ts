/**
 * Resources, prompts and completions of federated upstreams at the gateway's MCP server (docs/mcp.md,
 * "Methods"; docs/federation.md, "Resources, prompts and completions"), with the real
 * `@modelcontextprotocol/server-everything` as the upstream and the SDK's own client (revision 2025-11-25)
 * as the agent, then revision 2026-07-28 over raw HTTP:
 * - resources/list and resources/templates/list under `<upstream>__<name>` and `agw://<upstream>/<uri>`;
 * - resources/read governed: a tenant Rego rule on `input.params.uri` denies one URI (a JSON-RPC error
 *   naming the violation), every read is in the audit log (tool = upstream, method = resources/read);
 * - an upstream's own URI (a resource_link of its tool results) is read from that upstream;
 * - prompts/list and a governed prompts/get; completion/complete of a prompt argument and a template;
 * - a managed session's server offers only what its allowed_tools select.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ReferenceServer, startServerEverything } from '@agw/mcp-fixtures';
import { type Tenant, api, humanSession, newTenant, recordRaw } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

jest.setTimeout(120_000);

const DOC_PREFIX = 'demo://resource/static/document/';
const V = '2026-07-28';

let everything: ReferenceServer;
let t: Tenant;

async function gatewayClient(key: string, path_ = '/mcp/server'): Promise<Client> {
  const client = new Client({ name: 'e2e-resources-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}${path_}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function modern(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}, caps: Record<string, unknown> = {}) {
  const url = `${E2E_BASE_URL}/mcp/server`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientInfo': { name: 'e2e-modern', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': caps } } }),
  });
  await recordRaw('POST', url, res);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  everything = await startServerEverything();
  t = await newTenant('MCP resources');
  const r = await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'everything', url: everything.url } });
  expect(r.status).toBe(201);
  expect(r.body.status).toBe('connected');
});

afterAll(() => everything?.close());

describe('revision 2025-11-25 through the SDK client', () => {
  test('initialize advertises resources, prompts and completions; resources and templates are listed under federated names', async () => {
    const client = await gatewayClient(t.apiKey);
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {}, completions: {} });
    expect(client.getServerCapabilities()?.resources?.subscribe).toBeUndefined();
    const { resources } = await client.listResources();
    const doc = resources.find((r) => r.uri.startsWith(`agw://everything/${DOC_PREFIX}`));
    expect(doc).toBeDefined();
    expect(doc!.name).toMatch(/^everything__/);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((x) => x.uriTemplate)).toContain('agw://everything/demo://resource/dynamic/text/{resourceId}');
    expect(resourceTemplates.find((x) => x.uriTemplate.endsWith('/text/{resourceId}'))!.name).toBe('everything__Dynamic Text Resource');
    await client.close();
  });

  test('resources/read is a governed, audited call; a Rego rule on the URI denies one; the upstream’s own URI is read too', async () => {
    const policy = ['package agw.custom', '', 'import rego.v1', '', 'deny contains "resource 13 is off limits" if {', '  input.method == "resources/read"', '  input.tool == "everything"', '  endswith(input.params.uri, "/text/13")', '}', ''].join('\n');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
    const client = await gatewayClient(t.apiKey);
    const read = await client.readResource({ uri: 'agw://everything/demo://resource/dynamic/text/7' });
    expect(read.contents[0]).toMatchObject({ uri: 'agw://everything/demo://resource/dynamic/text/7', mimeType: 'text/plain' });
    expect(String((read.contents[0] as { text: string }).text)).toContain('7');
    const actionId = (read._meta as Record<string, string>)['io.agw/action_id'];
    expect(actionId).toMatch(/^[0-9a-f-]{36}$/);
    // the denied URI: a JSON-RPC error naming the violation; nothing reaches the upstream
    await expect(client.readResource({ uri: 'agw://everything/demo://resource/dynamic/text/13' })).rejects.toThrow(/resource 13 is off limits/);
    // the upstream's own URI (as a resource_link of its tool results names it): routed by its template
    const own = await client.readResource({ uri: 'demo://resource/dynamic/text/8' });
    expect(own.contents[0].uri).toBe('agw://everything/demo://resource/dynamic/text/8');
    await expect(client.readResource({ uri: 'agw://nobody/demo://x' })).rejects.toThrow(/no upstream "nobody"/);
    const log = await api('GET', '/audit/log?limit=20', { key: t.apiKey });
    const records = log.body.records as Array<{ action_id: string; tool: string; method: string; decision: string; params: { uri: string }; violations?: string[] }>;
    expect(records.find((r) => r.action_id === actionId)).toMatchObject({ tool: 'everything', method: 'resources/read', decision: 'allow', params: { uri: 'demo://resource/dynamic/text/7' } });
    const denied = records.find((r) => r.method === 'resources/read' && r.params.uri === 'demo://resource/dynamic/text/13');
    expect(denied).toMatchObject({ tool: 'everything', decision: 'deny' });
    expect(JSON.stringify(denied)).toContain('resource 13 is off limits');
    await client.close();
    await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'general' } });
  });

  test('a read a Rego rule sends to a human waits for the approval; once approved, its result is at GET /actions/{id}', async () => {
    const policy = ['package agw.custom', '', 'import rego.v1', '', 'approval contains "blobs need a human" if {', '  input.method == "resources/read"', '  contains(input.params.uri, "/blob/")', '}', ''].join('\n');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
    const client = await gatewayClient(t.apiKey);
    const queued = await client.readResource({ uri: 'agw://everything/demo://resource/dynamic/blob/4' }).then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(queued).toMatch(/requires human approval/);
    const actionId = /GET \/api\/actions\/([0-9a-f-]{36})/.exec(queued!)![1];
    expect((await api('GET', `/actions/${actionId}`, { key: t.apiKey })).body).toMatchObject({ status: 'pending', tool: 'everything', method: 'resources/read', execution_result: null });
    const approved = await api('POST', `/approve/${actionId}`, { token: await humanSession(t), body: { note: 'fine' } });
    expect(approved.status).toBe(200);
    const after = await api('GET', `/actions/${actionId}`, { key: t.apiKey });
    expect(after.body).toMatchObject({ status: 'approved', execution_mode: 'gateway_brokered' });
    expect(after.body.execution_result.status_code).toBe(200);
    expect(after.body.execution_result.body.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/blob/4', blob: expect.any(String) });
    await client.close();
    await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'general' } });
  });

  test('the HTTP entrance takes the same governed read: POST /api/mcp/tools/call {tool: upstream, method: resources/read}', async () => {
    const r = await api('POST', '/mcp/tools/call', { key: t.apiKey, body: { agent_id: 'http-agent', agent_type: 'assistant', agent_version: '1.0.0', tool: 'everything', method: 'resources/read', params: { uri: 'demo://resource/dynamic/text/2' } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'allowed', execution_mode: 'gateway_brokered' });
    expect(r.body.execution_result.body.contents[0]).toMatchObject({ uri: 'demo://resource/dynamic/text/2' });
  });

  test('prompts are listed under federated names, got as governed calls, and their arguments completed', async () => {
    // the catalog shows each prompt beside the tools: name prompt:<prompt>, federated_name as prompts/list names it
    const up = await api('GET', '/upstreams/everything', { key: t.apiKey });
    expect(up.body.tools.find((x: { name: string }) => x.name === 'prompt:args-prompt')).toMatchObject({ federated_name: 'everything__args-prompt', state: 'active' });
    const client = await gatewayClient(t.apiKey);
    const { prompts } = await client.listPrompts();
    const args = prompts.find((p) => p.name === 'everything__args-prompt');
    expect(args).toMatchObject({ arguments: [{ name: 'city', required: true }, { name: 'state' }] });
    const got = await client.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Lyon' } });
    expect(JSON.stringify(got.messages)).toContain('Lyon');
    const actionId = (got._meta as Record<string, string>)['io.agw/action_id'];
    const log = await api('GET', '/audit/log?limit=10', { key: t.apiKey });
    expect(log.body.records.find((r: { action_id: string }) => r.action_id === actionId)).toMatchObject({ tool: 'everything', method: 'prompts/get', decision: 'allow', params: { prompt: 'args-prompt', arguments: { city: 'Lyon' } } });
    await expect(client.getPrompt({ name: 'everything__no-such-prompt' })).rejects.toThrow(/not found/);
    const done = await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'E' } });
    expect(done.completion.values).toEqual(['Engineering']);
    const byContext = await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'name', value: '' }, context: { arguments: { department: 'Sales' } } });
    expect(byContext.completion.values).toEqual(['David', 'Eve', 'Frank']);
    const template = await client.complete({ ref: { type: 'ref/resource', uri: 'agw://everything/demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '1' } });
    expect(Array.isArray(template.completion.values)).toBe(true);
    await expect(client.subscribeResource({ uri: 'agw://everything/demo://resource/dynamic/text/7' })).rejects.toThrow(/-32601|not found|Method not found|does not support/i);
    await client.close();
  });

  test("another tenant sees none of them; a managed session's server offers only what its allowed_tools select", async () => {
    const other = await newTenant('MCP resources, other');
    const client = await gatewayClient(other.apiKey);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    await expect(client.readResource({ uri: 'agw://everything/demo://resource/dynamic/text/7' })).rejects.toThrow(/no upstream "everything"/);
    await expect(client.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'x' } })).rejects.toThrow(/not found/);
    await client.close();
    const cfg = await api('POST', '/managed/agents', { key: t.apiKey, body: { name: 'resource-agent', allowed_tools: ['everything__args-prompt', 'everything__Dynamic Text Resource'] } });
    expect(cfg.status).toBe(200);
    const s = await api('POST', '/managed/sessions', { key: t.apiKey, body: { agent_id: cfg.body.id, user_message: 'Read something' } });
    expect(s.status).toBe(200);
    const session = await gatewayClient(t.apiKey, `/mcp/server/sessions/${s.body.session_id}`);
    expect((await session.listPrompts()).prompts.map((p) => p.name)).toEqual(['everything__args-prompt']);
    expect((await session.listResources()).resources).toEqual([]);
    expect((await session.listResourceTemplates()).resourceTemplates.map((x) => x.name)).toEqual(['everything__Dynamic Text Resource']);
    const read = await session.readResource({ uri: 'agw://everything/demo://resource/dynamic/text/3' });
    expect(read.contents).toHaveLength(1);
    await expect(session.readResource({ uri: 'agw://everything/demo://resource/dynamic/blob/3' })).rejects.toThrow(/allowed_tools/);
    await expect(session.getPrompt({ name: 'everything__simple-prompt' })).rejects.toThrow(/not found/);
    await session.close();
    const audit = await api('GET', `/managed/sessions/${s.body.session_id}/audit`, { key: t.apiKey });
    expect(JSON.stringify(audit.body)).toContain('resources/read');
  });
});

describe("one upstream's own server (/mcp/server/upstreams/{name})", () => {
  test('offers its resources, templates and prompts under their own names and URIs, reads and gets governed', async () => {
    const client = await gatewayClient(t.apiKey, '/mcp/server/upstreams/everything');
    expect(client.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {}, completions: {} });
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    expect(resources.every((r) => r.uri.startsWith('demo://') && !r.name.startsWith('everything__'))).toBe(true);
    expect((await client.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}');
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
    const read = await client.readResource({ uri: 'demo://resource/dynamic/text/9' });
    expect(read.contents[0].uri).toBe('demo://resource/dynamic/text/9');
    const got = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Nantes' } });
    expect(JSON.stringify(got.messages)).toContain('Nantes');
    const done = await client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'Ma' } });
    expect(done.completion.values).toEqual(['Marketing']);
    const log = await api('GET', '/audit/log?limit=10', { key: t.apiKey });
    const ids = [read._meta, got._meta].map((m) => (m as Record<string, string>)['io.agw/action_id']);
    const records = log.body.records.filter((r: { action_id: string }) => ids.includes(r.action_id));
    expect(records.map((r: { tool: string; method: string }) => `${r.tool} ${r.method}`).sort()).toEqual(['everything prompts/get', 'everything resources/read']);
    await client.close();
  });
});

describe('an upstream that stops answering', () => {
  test('is left out of the lists and named in their _meta; the others are still listed', async () => {
    const gone = await startServerEverything();
    expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'gone', url: gone.url } })).body.status).toBe('connected');
    const client = await gatewayClient(t.apiKey);
    expect((await client.listResources()).resources.some((r) => r.uri.startsWith('agw://gone/'))).toBe(true);
    gone.child.kill('SIGKILL');
    await new Promise((r) => gone.child.once('exit', r));
    const after = await client.listResources();
    expect(after.resources.some((r) => r.uri.startsWith('agw://gone/'))).toBe(false);
    expect(after.resources.some((r) => r.uri.startsWith('agw://everything/'))).toBe(true);
    expect((after._meta as Record<string, string[]>)['io.agw/unavailable_upstreams']).toEqual([expect.stringMatching(/^gone: /)]);
    await client.close();
    expect((await api('DELETE', '/upstreams/gone', { key: t.apiKey })).status).toBe(200);
  });
});

describe('revision 2026-07-28 over raw HTTP', () => {
  test('server/discover advertises them; lists carry ttlMs and cacheScope; reads and gets need Mcp-Name', async () => {
    const discover = await modern('server/discover', {});
    expect(discover.body.result.capabilities).toMatchObject({ tools: {}, resources: {}, prompts: {}, completions: {} });
    const list = await modern('resources/list', {});
    expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'private' });
    expect(list.body.result.resources.some((r: { uri: string }) => r.uri.startsWith('agw://everything/'))).toBe(true);
    const templates = await modern('resources/templates/list', {});
    expect(templates.body.result.resourceTemplates.length).toBeGreaterThan(0);
    const prompts = await modern('prompts/list', {});
    expect(prompts.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(prompts.body.result.prompts.map((p: { name: string }) => p.name)).toContain('everything__simple-prompt');
    const uri = 'agw://everything/demo://resource/dynamic/text/5';
    const read = await modern('resources/read', { uri }, { 'mcp-name': uri });
    expect(read).toMatchObject({ status: 200, body: { result: { resultType: 'complete', contents: [{ uri }] } } });
    expect(read.body.result._meta['io.agw/action_id']).toMatch(/^[0-9a-f-]{36}$/);
    const noName = await modern('resources/read', { uri });
    expect(noName).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
    const got = await modern('prompts/get', { name: 'everything__simple-prompt' }, { 'mcp-name': 'everything__simple-prompt' });
    expect(got.body.result).toMatchObject({ resultType: 'complete', messages: expect.any(Array) });
    const done = await modern('completion/complete', { ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'Su' } });
    expect(done.body.result).toMatchObject({ resultType: 'complete', completion: { values: ['Support'] } });
    const subscribe = await modern('resources/subscribe', { uri });
    expect(subscribe).toMatchObject({ status: 404, body: { error: { code: -32601 } } });
  });

  test('a read a Rego rule sends to a human: input_required with the console page for a client that opens URLs; its retry gets the approved contents, and a changed URI is refused', async () => {
    const policy = ['package agw.custom', '', 'import rego.v1', '', 'approval contains "blobs need a human" if {', '  input.method == "resources/read"', '  contains(input.params.uri, "/blob/")', '}', ''].join('\n');
    expect((await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'custom', custom_policy: policy } })).status).toBe(200);
    const caps = { elicitation: { url: {} } };
    const uri = 'agw://everything/demo://resource/dynamic/blob/6';
    const first = await modern('resources/read', { uri }, { 'mcp-name': uri }, caps);
    expect(first.body.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String), inputRequests: { agw_approval: { method: 'elicitation/create', params: { mode: 'url', url: expect.stringMatching(/\/approvals\/[0-9a-f-]{36}$/) } } } });
    const actionId = first.body.result._meta['io.agw/action_id'];
    const other = 'agw://everything/demo://resource/dynamic/blob/7';
    const changed = await modern('resources/read', { uri: other, requestState: first.body.result.requestState }, { 'mcp-name': other }, caps);
    expect(changed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/belongs to another call/) });
    expect((await api('POST', `/approve/${actionId}`, { token: await humanSession(t), body: { note: 'fine' } })).status).toBe(200);
    const retry = await modern('resources/read', { uri, requestState: first.body.result.requestState, inputResponses: { agw_approval: { action: 'accept' } } }, { 'mcp-name': uri }, caps);
    expect(retry.body.result).toMatchObject({ resultType: 'complete', contents: [{ uri, blob: expect.any(String) }], _meta: { 'io.agw/action_id': actionId } });
    // a client that cannot open a URL still gets the JSON-RPC error naming the queued action
    const plain = await modern('resources/read', { uri }, { 'mcp-name': uri });
    expect(plain.body.error).toMatchObject({ code: -32600, data: { status: 'pending' } });
    await api('PATCH', '/dashboard/settings', { key: t.apiKey, body: { policy_template: 'general' } });
  });
});
