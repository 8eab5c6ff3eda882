/**
 * Revision 2026-07-28's HTTP rules, checked against the examples of its own text
 * (docs/specification/2026-07-28/basic/transports/streamable-http.mdx, basic/versioning.mdx,
 * server/discover.mdx in modelcontextprotocol/modelcontextprotocol).
 */
import { ERR_HEADER_MISMATCH, ERR_UNSUPPORTED_VERSION, type Era, answerModern, classify, decodeHeaderValue } from './modern-revision';

const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'ExampleClient', version: '1.0.0' }, 'io.modelcontextprotocol/clientCapabilities': {} };
// the spec's `tools/call` request example, headers and body
const toolsCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'Seattle, WA' }, _meta: meta } };
const toolsCallHeaders = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_weather' };

const handlers = {
  serverInfo: { name: 'agw-governance-gateway', version: '1.0.0' },
  capabilities: { tools: {} },
  listTtlMs: 30_000,
  listTools: async () => [{ name: 'get_weather', inputSchema: { type: 'object' } }],
  callTool: async (name: string) => ({ content: [{ type: 'text', text: `called ${name}` }], _meta: { 'io.agw/action_id': 'a-1' } }),
  tasks: {
    get: async (taskId: string) => ({ taskId, status: 'working', createdAt: '2026-11-28T00:00:00.000Z', lastUpdatedAt: '2026-11-28T00:00:00.000Z', ttlMs: null }),
    cancel: async () => undefined,
    update: async () => undefined,
  },
};

describe('revision 2026-07-28: which era a request speaks', () => {
  test('initialize, no version at all, or an earlier version header: the legacy (SDK) path', () => {
    expect(classify({}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }).kind).toBe('legacy');
    expect(classify({}, { jsonrpc: '2.0', id: 1, method: 'tools/list' }).kind).toBe('legacy');
    expect(classify({ 'mcp-protocol-version': '2025-11-25' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }).kind).toBe('legacy');
  });

  test("the spec's tools/call example is modern and accepted", () => {
    expect(classify(toolsCallHeaders, toolsCall)).toMatchObject({ kind: 'modern' });
  });

  test('MCP-Protocol-Version must be present and equal the _meta version: else 400 HeaderMismatch (-32020)', () => {
    const missing = classify({ 'mcp-method': 'tools/call', 'mcp-name': 'get_weather' }, toolsCall);
    expect(missing).toMatchObject({ kind: 'reject', status: 400, body: { error: { code: ERR_HEADER_MISMATCH } } });
    const other = classify({ ...toolsCallHeaders, 'mcp-protocol-version': '2026-07-29' }, toolsCall);
    expect(other).toMatchObject({ kind: 'reject', status: 400, body: { id: 1, error: { code: ERR_HEADER_MISMATCH, message: expect.stringMatching(/^Header mismatch: /) } } });
  });

  test('an unknown version: 400 UnsupportedProtocolVersion (-32022) listing the supported ones and the requested one', () => {
    const body = { ...toolsCall, params: { ...toolsCall.params, _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' } } };
    const r = classify({ ...toolsCallHeaders, 'mcp-protocol-version': '1900-01-01' }, body);
    expect(r).toMatchObject({ kind: 'reject', status: 400, body: { error: { code: ERR_UNSUPPORTED_VERSION, message: 'Unsupported protocol version', data: { requested: '1900-01-01' } } } });
    expect(((r as Extract<Era, { kind: 'reject' }>).body as { error: { data: { supported: string[] } } }).error.data.supported).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25']));
  });

  test("Mcp-Method must equal the body's method; Mcp-Name the tool's name (Base64 sentinel decoded first)", () => {
    expect(classify({ ...toolsCallHeaders, 'mcp-method': 'tools/list' }, toolsCall)).toMatchObject({ kind: 'reject', status: 400, body: { error: { code: ERR_HEADER_MISMATCH } } });
    const { 'mcp-method': _m, ...noMethod } = toolsCallHeaders;
    expect(classify(noMethod, toolsCall)).toMatchObject({ kind: 'reject', status: 400 });
    // the spec's own example: "Mcp-Name header value 'foo' does not match body value 'bar'"
    const bar = { ...toolsCall, params: { ...toolsCall.params, name: 'bar' } };
    expect(classify({ ...toolsCallHeaders, 'mcp-name': 'foo' }, bar)).toMatchObject({ body: { error: { code: -32020, message: "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'" } } });
    const { 'mcp-name': _n, ...noName } = toolsCallHeaders;
    expect(classify(noName, toolsCall)).toMatchObject({ kind: 'reject', status: 400 });
    const unicode = { ...toolsCall, params: { ...toolsCall.params, name: 'météo' } };
    expect(classify({ ...toolsCallHeaders, 'mcp-name': `=?base64?${Buffer.from('météo').toString('base64')}?=` }, unicode)).toMatchObject({ kind: 'modern' });
  });

  test('header values: visible ASCII as is; the sentinel decoded; anything else refused', () => {
    expect(decodeHeaderValue('get_weather')).toBe('get_weather');
    expect(decodeHeaderValue(`=?base64?${Buffer.from('Región').toString('base64')}?=`)).toBe('Región');
    expect(decodeHeaderValue(' leading')).toBeNull();
    expect(decodeHeaderValue('=?base64?!!!?=')).toBeNull();
  });
});

describe('revision 2026-07-28: the answers', () => {
  test('server/discover: supported versions, capabilities, the server in _meta, resultType and cache hints', async () => {
    const r = await answerModern({ jsonrpc: '2.0', id: 'discover-1', method: 'server/discover', params: { _meta: meta } }, handlers);
    expect(r).toEqual({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: 'discover-1',
        result: { resultType: 'complete', supportedVersions: expect.arrayContaining(['2026-07-28']), capabilities: { tools: {} }, ttlMs: 3_600_000, cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': handlers.serverInfo } },
      },
    });
  });

  test('tools/list carries ttlMs and cacheScope; tools/call keeps its own _meta and adds the server', async () => {
    const list = await answerModern({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } }, handlers);
    expect(list.body!.result).toMatchObject({ resultType: 'complete', tools: [{ name: 'get_weather' }], ttlMs: 30_000, cacheScope: 'private' });
    const call = await answerModern(toolsCall, handlers);
    expect(call.body!.result).toEqual({ resultType: 'complete', content: [{ type: 'text', text: 'called get_weather' }], _meta: { 'io.agw/action_id': 'a-1', 'io.modelcontextprotocol/serverInfo': handlers.serverInfo } });
  });

  test('ping and logging/setLevel are gone in this revision: 404 with -32601; a notification is a bodyless 202', async () => {
    for (const method of ['ping', 'logging/setLevel', 'resources/list']) {
      expect(await answerModern({ jsonrpc: '2.0', id: 3, method, params: { _meta: meta } }, handlers)).toMatchObject({ status: 404, body: { error: { code: -32601 } } });
    }
    expect(await answerModern({ jsonrpc: '2.0', method: 'notifications/whatever', params: { _meta: meta } }, handlers)).toEqual({ status: 202 });
  });
});

describe('revision 2026-07-28: multi round-trip requests and the Tasks extension', () => {
  test('a retry hands its requestState and inputResponses to the call; an input_required or task answer keeps its own resultType', async () => {
    const seen: unknown[] = [];
    const h = { ...handlers, callTool: async (_n: string, _a: Record<string, unknown>, round: unknown) => (seen.push(round), { resultType: 'input_required', requestState: 's-2' }) };
    const retry = { ...toolsCall, id: 2, params: { ...toolsCall.params, requestState: 's-1', inputResponses: { agw_approval: { action: 'accept' } } } };
    const r = await answerModern(retry, h);
    expect(seen).toEqual([{ meta, requestState: 's-1', inputResponses: { agw_approval: { action: 'accept' } } }]);
    expect(r.body!.result).toMatchObject({ resultType: 'input_required', requestState: 's-2' });
  });

  test('a requestState that is not a string, or inputResponses that are not an object: -32602', async () => {
    for (const extra of [{ requestState: 42 }, { inputResponses: ['x'] }, { inputResponses: 'x' }]) {
      const r = await answerModern({ ...toolsCall, params: { ...toolsCall.params, ...extra } }, handlers);
      expect(r.body!.error).toMatchObject({ code: -32602 });
    }
  });

  test('tasks/get answers the task as a complete result; tasks/cancel and tasks/update an empty one; a missing taskId is -32602', async () => {
    const get = await answerModern({ jsonrpc: '2.0', id: 5, method: 'tasks/get', params: { taskId: 't-1', _meta: meta } }, handlers);
    expect(get.body!.result).toMatchObject({ resultType: 'complete', taskId: 't-1', status: 'working' });
    for (const method of ['tasks/cancel', 'tasks/update']) {
      const r = await answerModern({ jsonrpc: '2.0', id: 6, method, params: { taskId: 't-1', _meta: meta } }, handlers);
      expect(r.body!.result).toEqual({ resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': handlers.serverInfo } });
    }
    expect((await answerModern({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { _meta: meta } }, handlers)).body!.error).toMatchObject({ code: -32602 });
  });

  test('the Tasks extension: Mcp-Name repeats params.taskId', () => {
    const get = { jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { taskId: 't-1', _meta: meta } };
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tasks/get' };
    expect(classify({ ...headers, 'mcp-name': 't-1' }, get).kind).toBe('modern');
    expect(classify(headers, get)).toMatchObject({ kind: 'reject', body: { error: { code: ERR_HEADER_MISMATCH } } });
    expect(classify({ ...headers, 'mcp-name': 't-2' }, get)).toMatchObject({ kind: 'reject', body: { error: { code: ERR_HEADER_MISMATCH } } });
  });
});
