// One MCP server process for bench/mcp-sdk.bench.mjs: the same two tools (`echo`, `add`) answered per
// request, stateless, JSON responses, in one of three ways (argv[2]):
//   v1      @modelcontextprotocol/sdk 1.32: a fresh low-level Server and StreamableHTTPServerTransport per
//           request (sessionIdGenerator undefined, enableJsonResponse), as the gateway serves 2025 clients
//   v2      @modelcontextprotocol/server 2.4: createMcpHandler (both eras; a fresh low-level Server per
//           request from the factory), node:http adapted to its fetch face
//   v2json  @modelcontextprotocol/server 2.4: a fresh low-level Server and WebStandardStreamableHTTPServerTransport
//           per request with JSON responses (2025 revisions only; v1's shape on v2)
//   v2node  the same with @modelcontextprotocol/node 2.1's NodeStreamableHTTPServerTransport (node's req/res)
//   hand    node:http, the JSON-RPC dispatched by hand (what the gateway's own 2026-07-28 module does)
// Prints MCP_READY once listening on 127.0.0.1:argv[3].
import http from 'node:http';

const kind = process.argv[2];
const port = Number(process.argv[3]);

const TOOLS = [
  { name: 'echo', description: 'Echo a message', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
  { name: 'add', description: 'Add two numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
];
const call = (params) => {
  const a = params?.arguments ?? {};
  if (params?.name === 'add') return { content: [{ type: 'text', text: String(Number(a.a) + Number(a.b)) }] };
  return { content: [{ type: 'text', text: `Echo: ${a.message}` }] };
};
const INFO = { name: 'bench-mcp', version: '1.0.0' };

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

let handle;
if (kind === 'v1') {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  handle = async (req, res) => {
    const body = JSON.parse(await readBody(req));
    const server = new Server(INFO, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => call(r.params));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
} else if (kind === 'v2') {
  const { Server, createMcpHandler } = await import('@modelcontextprotocol/server');
  const mcp = createMcpHandler(() => {
    const server = new Server(INFO, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: TOOLS }));
    server.setRequestHandler('tools/call', async (r) => call(r.params));
    return server;
  });
  handle = async (req, res) => {
    const text = await readBody(req);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, { method: req.method, headers, body: text });
    const answer = await mcp.fetch(request, { parsedBody: JSON.parse(text) });
    const out = Buffer.from(await answer.arrayBuffer());
    const h = {};
    answer.headers.forEach((v, k) => (h[k] = v));
    res.writeHead(answer.status, h);
    res.end(out);
  };
} else if (kind === 'v2json') {
  const { Server, WebStandardStreamableHTTPServerTransport } = await import('@modelcontextprotocol/server');
  handle = async (req, res) => {
    const text = await readBody(req);
    const server = new Server(INFO, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: TOOLS }));
    server.setRequestHandler('tools/call', async (r) => call(r.params));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, { method: req.method, headers, body: text });
    const answer = await transport.handleRequest(request, { parsedBody: JSON.parse(text) });
    const out = Buffer.from(await answer.arrayBuffer());
    const h = {};
    answer.headers.forEach((v, k) => (h[k] = v));
    res.writeHead(answer.status, h);
    res.end(out);
    void transport.close();
    void server.close();
  };
} else if (kind === 'v2node') {
  const { Server } = await import('@modelcontextprotocol/server');
  const { NodeStreamableHTTPServerTransport } = await import('@modelcontextprotocol/node');
  handle = async (req, res) => {
    const body = JSON.parse(await readBody(req));
    const server = new Server(INFO, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: TOOLS }));
    server.setRequestHandler('tools/call', async (r) => call(r.params));
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
} else if (kind === 'hand') {
  handle = async (req, res) => {
    const m = JSON.parse(await readBody(req));
    const result = m.method === 'tools/list' ? { tools: TOOLS } : m.method === 'tools/call' ? call(m.params) : undefined;
    const out = JSON.stringify(result ? { jsonrpc: '2.0', id: m.id, result: { ...result, resultType: 'complete' } } : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  };
} else {
  throw new Error(`unknown kind ${kind}`);
}

http
  .createServer((req, res) => {
    handle(req, res).catch((e) => {
      res.writeHead(500);
      res.end(String(e));
    });
  })
  .listen(port, '127.0.0.1', () => process.stdout.write('MCP_READY\n'));
