/**
 * The fixture MCP servers, all on one port (each under its own path, Streamable HTTP with sessions unless
 * said): a definition that changes on command, a credential check, poisoned descriptions and the hostile
 * upstreams (huge results, silence, endless streams, malformed JSON-RPC, garbage, thousands of tools),
 * plus the legacy HTTP+SSE transport. `/control/*` drives them and shows the calls they received.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type FixtureTool, MANY_PAGE, defaultTools, echoTool, endlessTools, hugeTools, manyTools, poisonedTools, silentTools } from './fixture-tools';
import { serveFixture } from './fixture-http';
import { json, readJson, readText } from './http-body';
import { sendListChanged, watchStandalone } from './list-changed';
import { TokenIssuer } from './oauth-token';

export type EndpointName = 'mutable' | 'secured' | 'huge' | 'silent' | 'endless' | 'many' | 'poisoned' | 'legacy';

export interface RecordedCall {
  endpoint: EndpointName;
  tool: string;
  arguments: Record<string, unknown>;
  headers: { authorization?: string; 'x-api-key'?: string };
}

export interface FixtureState {
  calls: RecordedCall[];
  /** the mutable endpoint's tools, by name */
  mutable: Map<string, FixtureTool>;
  tokens: TokenIssuer;
}

export interface FixtureOptions {
  port: number;
  host?: string;
  /** the secured endpoint's static bearer token / API key (OAuth tokens from /oauth/token are accepted too) */
  bearer?: string;
}

export interface Fixtures {
  /** `http://host:port`, no trailing slash */
  url: string;
  state: FixtureState;
  /** the MCP sessions open now (Streamable HTTP and legacy SSE), of one endpoint or of all */
  openSessions(endpoint?: EndpointName): number;
  /** closes every session and the HTTP server, open sockets (hanging calls, SSE streams) included */
  close(): Promise<void>;
}

interface Session {
  server: Server;
  /** Streamable HTTP sessions: the transport that handles the session's requests */
  transport?: StreamableHTTPServerTransport;
  /** the session's standalone GET SSE stream is open (server-initiated notifications go there) */
  standalone?: boolean;
  /** a tools/list_changed came while no standalone stream was open: sent as soon as one opens */
  listChangedPending?: boolean;
  close(): Promise<void>;
}

const STREAMABLE: EndpointName[] = ['mutable', 'secured', 'huge', 'silent', 'endless', 'many', 'poisoned'];

export async function startFixtures(o: FixtureOptions): Promise<Fixtures> {
  const shutdown = new AbortController();
  const state: FixtureState = { calls: [], mutable: toolMap(defaultTools()), tokens: new TokenIssuer() };
  const sessions = new Map<EndpointName, Map<string, Session>>(STREAMABLE.concat('legacy').map((e) => [e, new Map()]));
  const staticTools: Partial<Record<EndpointName, Map<string, FixtureTool>>> = {
    secured: toolMap(defaultTools()),
    legacy: toolMap(defaultTools()),
    huge: toolMap(hugeTools()),
    silent: toolMap(silentTools()),
    endless: toolMap(endlessTools()),
    many: toolMap(manyTools()),
    poisoned: toolMap(poisonedTools()),
  };
  const toolsOf = (e: EndpointName) => (e === 'mutable' ? state.mutable : staticTools[e]!);

  /** One MCP server (per session) of an endpoint: tools/list (paginated for `many`) and tools/call. */
  const mcpServer = (endpoint: EndpointName): Server => {
    const server = new Server({ name: `agw-fixture-${endpoint}`, version: '1.0.0' }, { capabilities: { tools: { listChanged: true }, logging: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      const all = [...toolsOf(endpoint).values()].map((t) => t.definition);
      if (endpoint !== 'many') return { tools: all };
      const cursor = req.params?.cursor;
      const from = cursor === undefined ? 0 : /^\d+$/.test(cursor) ? Number(cursor) : NaN;
      if (!(from >= 0 && from < all.length)) throw new McpError(ErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(cursor)}`);
      const next = from + MANY_PAGE;
      return { tools: all.slice(from, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const headers = extra.requestInfo?.headers ?? {};
      const one = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);
      state.calls.push({
        endpoint,
        tool: req.params.name,
        arguments: req.params.arguments ?? {},
        headers: { ...(one(headers.authorization) ? { authorization: one(headers.authorization) } : {}), ...(one(headers['x-api-key']) ? { 'x-api-key': one(headers['x-api-key']) } : {}) },
      });
      const tool = toolsOf(endpoint).get(req.params.name);
      if (!tool) return { content: [{ type: 'text', text: `unknown tool ${req.params.name}` }], isError: true };
      const signal = AbortSignal.any([extra.signal, shutdown.signal]);
      return tool.run(req.params.arguments ?? {}, {
        signal,
        notify: (message) => extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: message } }),
      });
    });
    return server;
  };

  /**
   * tools/list_changed to every open session of the mutable endpoint, on its standalone GET stream. A session
   * whose client has not opened that stream yet (the SDK client opens it right after `initialize`, without
   * waiting) gets it when the stream opens: without that, a change made just after a connect would be lost.
   */
  const notifyMutable = async () => {
    await Promise.all(
      [...sessions.get('mutable')!.values()].map(sendListChanged),
    );
  };

  const authorized = (req: IncomingMessage): boolean => {
    const auth = req.headers.authorization ?? '';
    const bearer = /^Bearer\s+(.+)$/i.exec(auth)?.[1];
    if (o.bearer && (bearer === o.bearer || req.headers['x-api-key'] === o.bearer)) return true;
    return bearer !== undefined && state.tokens.valid(bearer);
  };

  const streamable = async (endpoint: EndpointName, req: IncomingMessage, res: ServerResponse) => {
    const open = sessions.get(endpoint)!;
    const id = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(id) ? id[0] : id;
    if (sessionId) {
      const s = open.get(sessionId);
      if (!s?.transport) return json(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
      if (req.method === 'GET') watchStandalone(s, res);
      return s.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: no session' } });
    const server = mcpServer(endpoint);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void open.set(sid, { server, transport, close: () => server.close() }),
      onsessionclosed: (sid) => void open.delete(sid),
    });
    transport.onclose = () => {
      if (transport.sessionId) open.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const legacy = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const open = sessions.get('legacy')!;
    if (req.method === 'GET' && url.pathname === '/legacy/sse') {
      const server = mcpServer('legacy');
      const transport = new SSEServerTransport('/legacy/messages', res);
      open.set(transport.sessionId, { server, close: () => server.close() });
      transport.onclose = () => void open.delete(transport.sessionId);
      return server.connect(transport);
    }
    if (req.method === 'POST' && url.pathname === '/legacy/messages') {
      const s = open.get(url.searchParams.get('sessionId') ?? '');
      const transport = s?.server.transport as SSEServerTransport | undefined;
      if (!transport) return json(res, 404, { error: 'unknown session' });
      return transport.handlePostMessage(req, res);
    }
    json(res, 405, { error: 'method not allowed' });
  };

  const control = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (req.method === 'GET' && path === '/control/calls') return json(res, 200, state.calls);
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' });
    const body = (await readJson(req)) as { tool?: string; name?: string; description?: string };
    switch (path) {
      case '/control/calls/reset':
        state.calls.length = 0;
        return json(res, 200, { ok: true });
      case '/control/oauth/revoke-all':
        state.tokens.revokeAll();
        return json(res, 200, { ok: true });
      case '/control/mutable/describe': {
        const tool = state.mutable.get(body.tool ?? '');
        if (!tool || typeof body.description !== 'string') return json(res, 400, { error: 'tool (an existing tool) and description are required' });
        state.mutable.set(tool.definition.name, { ...tool, definition: { ...tool.definition, description: body.description } });
        break;
      }
      case '/control/mutable/add-tool':
        if (!body.name) return json(res, 400, { error: 'name is required' });
        state.mutable.set(body.name, echoTool(body.name, body.description ?? `Echo (${body.name}).`));
        break;
      case '/control/mutable/remove-tool':
        state.mutable.delete(body.name ?? '');
        break;
      case '/control/mutable/reset':
        state.mutable = toolMap(defaultTools());
        break;
      default:
        return json(res, 404, { error: `no control ${path}` });
    }
    await notifyMutable();
    json(res, 200, { ok: true, tools: [...state.mutable.keys()] });
  };

  const server = await serveFixture(o, 'fixtures closing', async (req, res, url) => {
    const path = url.pathname;
    if (path.startsWith('/control/')) return control(req, res, path);
    if (path === '/oauth/token' && req.method === 'POST') return state.tokens.handle(req, await readText(req), res);
    if (path === '/malformed/mcp') {
      await readText(req);
      // HTTP is fine, JSON is fine, JSON-RPC is not
      return req.method === 'POST' ? res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"1.0","oops":true}') : json(res, 405, { error: 'method not allowed' });
    }
    if (path === '/garbage/mcp') {
      await readText(req);
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an MCP server</html>');
    }
    if (path.startsWith('/legacy/')) return legacy(req, res, url);
    const endpoint = /^\/([a-z]+)\/mcp$/.exec(path)?.[1] as EndpointName | undefined;
    if (endpoint && STREAMABLE.includes(endpoint)) {
      if (endpoint === 'secured' && !authorized(req)) {
        await readText(req);
        return res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="agw-fixture"' }).end(JSON.stringify({ error: 'unauthorized' }));
      }
      return streamable(endpoint, req, res);
    }
    json(res, 404, { error: `no fixture at ${path}` });
  });
  return {
    url: server.url,
    state,
    openSessions: (endpoint) => (endpoint ? sessions.get(endpoint)!.size : [...sessions.values()].reduce((n, m) => n + m.size, 0)),
    close: async () => {
      if (!server.beginClose()) return;
      shutdown.abort(new Error('fixtures closed'));
      const all = [...sessions.values()].flatMap((m) => [...m.values()]);
      await Promise.all(all.map((s) => s.close().catch(() => undefined)));
      await server.close();
    },
  };
}

function toolMap(tools: FixtureTool[]): Map<string, FixtureTool> {
  return new Map(tools.map((t) => [t.definition.name, t]));
}

