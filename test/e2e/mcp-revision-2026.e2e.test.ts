/**
 * Protocol revision 2026-07-28 on the gateway's MCP server (docs/mcp.md, "Protocol revisions"): stateless,
 * no `initialize`, the version in `_meta` and in `MCP-Protocol-Version`, `Mcp-Method`/`Mcp-Name` checked
 * against the body, `server/discover`, `resultType` and cache hints on results, and the refusals the
 * revision prescribes. The earlier revisions (the SDK's client, with initialize) keep working beside it.
 */
import { startFixtures } from '@agw/mcp-fixtures';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Tenant, api, newTenant, recordRaw } from './support/api';
import { E2E_BASE_URL } from './support/e2e-env';

const URL_ = `${E2E_BASE_URL}/mcp/server`;
const V = '2026-07-28';
const meta = (version = V) => ({ 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientInfo': { name: 'e2e-modern', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': {} });

let t: Tenant;
let fixtures: Awaited<ReturnType<typeof startFixtures>>;

async function modern(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}, id: number | null = 1) {
  const res = await fetch(URL_, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V, 'mcp-method': method, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...(id !== null ? { id } : {}), method, params: { ...params, _meta: (params._meta as object) ?? meta() } }),
  });
  await recordRaw('POST', URL_, res);
  // a JSON-RPC answer, read as loosely as the support's `api` reads its bodies
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const body: any = res.status === 202 ? undefined : await res.json();
  return { status: res.status, body };
}

beforeAll(async () => {
  t = await newTenant('MCP revision 2026-07-28');
  fixtures = await startFixtures({ port: 0, host: '127.0.0.1' });
  expect((await api('POST', '/upstreams', { key: t.apiKey, body: { name: 'fx', url: `${fixtures.url}/mutable/mcp` } })).body.status).toBe('connected');
});
afterAll(() => fixtures?.close());

test('server/discover, tools/list and a governed tools/call without initialize', async () => {
  const discover = await modern('server/discover', {});
  expect(discover).toMatchObject({ status: 200, body: { result: { resultType: 'complete', supportedVersions: expect.arrayContaining([V, '2025-11-25']), capabilities: { tools: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'agw-governance-gateway' } } } } });
  const list = await modern('tools/list', {});
  expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'private' });
  expect(list.body.result.tools.map((x: { name: string }) => x.name)).toContain('fx__add');
  const call = await modern('tools/call', { name: 'fx__add', arguments: { a: 40, b: 2 } }, { 'mcp-name': 'fx__add' });
  expect(call.status).toBe(200);
  expect(call.body.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: '42' }], _meta: { 'io.agw/action_id': expect.any(String), 'io.modelcontextprotocol/serverInfo': expect.any(Object) } });
  const log = await api('GET', '/audit/log?limit=3', { key: t.apiKey });
  expect(log.body.records.find((r: { action_id: string }) => r.action_id === call.body.result._meta['io.agw/action_id'])).toMatchObject({ tool: 'fx', method: 'add', decision: 'allow' });
});

test('the revision’s refusals: header mismatch (-32020), an unsupported version (-32022), a method it does not have (404, -32601)', async () => {
  const mismatch = await modern('tools/call', { name: 'fx__add', arguments: { a: 1, b: 1 } }, { 'mcp-name': 'fx__fail' });
  expect(mismatch).toMatchObject({ status: 400, body: { error: { code: -32020, message: expect.stringMatching(/Mcp-Name/) } } });
  const noName = await modern('tools/call', { name: 'fx__add', arguments: { a: 1, b: 1 } });
  expect(noName).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
  const wrongMethod = await modern('tools/list', {}, { 'mcp-method': 'tools/call' });
  expect(wrongMethod).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
  const metaMismatch = await modern('tools/list', { _meta: meta('2025-11-25') });
  expect(metaMismatch).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
  const unsupported = await modern('tools/list', { _meta: meta('1900-01-01') }, { 'mcp-protocol-version': '1900-01-01' });
  expect(unsupported).toMatchObject({ status: 400, body: { error: { code: -32022, data: { requested: '1900-01-01', supported: expect.arrayContaining([V]) } } } });
  const ping = await modern('ping', {});
  expect(ping).toMatchObject({ status: 404, body: { error: { code: -32601 } } });
  const notification = await modern('notifications/anything', {}, {}, null);
  expect(notification.status).toBe(202);
});

test('the earlier revisions still work beside it (the SDK client: initialize, 2025-11-25)', async () => {
  const client = new Client({ name: 'e2e-legacy', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { requestInit: { headers: { authorization: `Bearer ${t.apiKey}` } } }));
  expect((await client.callTool({ name: 'fx__add', arguments: { a: 1, b: 2 } })).content).toEqual([{ type: 'text', text: '3' }]);
  await client.close();
});
