/** The fixtures through the SDK's own client, on a real socket. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Fixtures, startFixtures } from './fixture-server';
import { HUGE_BYTES, MANY_TOOLS } from './fixture-tools';

jest.setTimeout(20_000);

let fx: Fixtures;
const clients: Client[] = [];
beforeAll(async () => {
  fx = await startFixtures({ port: 0, bearer: 'static-token' });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await fx.close();
});

async function connect(path: string, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'fixture-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(fx.url + path), { requestInit: { headers } }));
  clients.push(c);
  return c;
}

test('mutable: weather answers with structuredContent; a changed description is announced with tools/list_changed', async () => {
  const c = await connect('/mutable/mcp');
  const r = await c.callTool({ name: 'weather', arguments: { city: 'Oslo' } });
  expect(r.structuredContent).toEqual({ city: 'Oslo', temperature_c: 21.5, conditions: 'sunny' });
  expect((await c.callTool({ name: 'fail', arguments: {} })).isError).toBe(true);
  const changed = new Promise<void>((resolve) => c.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()));
  await new Promise((r) => setTimeout(r, 200)); // the client's standalone GET stream is open
  await fetch(`${fx.url}/control/mutable/describe`, { method: 'POST', body: JSON.stringify({ tool: 'weather', description: 'changed' }) });
  await changed;
  expect((await c.listTools()).tools.find((t) => t.name === 'weather')!.description).toBe('changed');
  await fetch(`${fx.url}/control/mutable/reset`, { method: 'POST' });
  expect(fx.state.calls.some((x) => x.endpoint === 'mutable' && x.tool === 'weather' && x.arguments.city === 'Oslo')).toBe(true);
});

test('secured: refused without a credential; a bearer token, an API key or an OAuth token is accepted', async () => {
  await expect(connect('/secured/mcp')).rejects.toThrow();
  await connect('/secured/mcp', { authorization: 'Bearer static-token' });
  await connect('/secured/mcp', { 'x-api-key': 'static-token' });
  const bad = await fetch(`${fx.url}/oauth/token`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('fixture-client:nope').toString('base64')}` }, body: new URLSearchParams({ grant_type: 'client_credentials' }) });
  expect(bad.status).toBe(401);
  const ok = (await (await fetch(`${fx.url}/oauth/token`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('fixture-client:fixture-secret').toString('base64')}` }, body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'tools' }) })).json()) as { access_token: string; scope: string };
  expect(ok.scope).toBe('tools');
  const c = await connect('/secured/mcp', { authorization: `Bearer ${ok.access_token}` });
  await c.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
  expect(fx.state.calls.at(-1)).toMatchObject({ endpoint: 'secured', tool: 'add', headers: { authorization: `Bearer ${ok.access_token}` } });
  await fetch(`${fx.url}/control/oauth/revoke-all`, { method: 'POST' });
  await expect(c.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).rejects.toThrow();
});

test('many: 5000 tools in pages; huge: more than 5 MB', async () => {
  const many = await connect('/many/mcp');
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = await many.listTools(cursor ? { cursor } : {});
    n += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  expect(n).toBe(MANY_TOOLS);
  const huge = await connect('/huge/mcp');
  const r = await huge.callTool({ name: 'dump', arguments: {} });
  expect(JSON.stringify(r).length).toBeGreaterThan(HUGE_BYTES);
});

test('malformed and garbage endpoints make a client fail to connect', async () => {
  await expect(connect('/malformed/mcp')).rejects.toThrow();
  await expect(connect('/garbage/mcp')).rejects.toThrow();
});

test('silent never answers; endless streams notifications and never answers; both end on the client timeout', async () => {
  const silent = await connect('/silent/mcp');
  await expect(silent.callTool({ name: 'hang', arguments: {} }, undefined, { timeout: 300 })).rejects.toThrow(/timed out/i);
  const endless = await connect('/endless/mcp');
  let ticks = 0;
  endless.setNotificationHandler(LoggingMessageNotificationSchema, async () => void ticks++);
  await expect(endless.callTool({ name: 'stream', arguments: {} }, undefined, { timeout: 500 })).rejects.toThrow(/timed out/i);
  expect(ticks).toBeGreaterThan(3);
});

test('poisoned lists the attack tools beside a clean one; the legacy SSE transport works', async () => {
  const c = await connect('/poisoned/mcp');
  const tools = (await c.listTools()).tools;
  expect(tools.map((t) => t.name)).toEqual(['add', 'translate', 'clean_echo']);
  expect(tools[0].description).toMatch(/<IMPORTANT>/);
  expect([...tools[1].description!].some((ch) => ch.codePointAt(0)! >= 0xe0000)).toBe(true);
  const legacy = new Client({ name: 'fixture-test', version: '1.0.0' });
  await legacy.connect(new SSEClientTransport(new URL(`${fx.url}/legacy/sse`)));
  clients.push(legacy);
  expect((await legacy.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).content).toEqual([{ type: 'text', text: '5' }]);
});

test('close() returns promptly with a call still hanging', async () => {
  const other = await startFixtures({ port: 0 });
  const c = new Client({ name: 'fixture-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${other.url}/silent/mcp`)));
  const pending = c.callTool({ name: 'hang', arguments: {} }).catch(() => 'ended');
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now();
  await other.close();
  expect(Date.now() - t0).toBeLessThan(2000);
  await c.close();
  expect(await pending).toBe('ended');
});
