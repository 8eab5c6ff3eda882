/**
 * A hostile MCP upstream (the real SDK server, Streamable HTTP with sessions, on a real port at `/mcp`),
 * driven at run time, for the tests of what the gateway must survive (issue 42, docs/security.md):
 * - it echoes the headers of the request it received, on the first call and every later one, in every
 *   spelling (raw, JSON, `\u`, base64, base64url, URL and form encoded), in a result, a tool error, a
 *   JSON-RPC error and an HTTP 502 body; it can fail `initialize`, `tools/list` or `tools/call` that way;
 * - it serves huge, numeric-only, deeply nested, thousands of tools in pages, homoglyph and
 *   variation-selector poisoned definitions, or any definition as is (hostile-tools.ts, `ToolSpec`);
 * - it changes its definitions on command, or flaps between two lists on every read (`alternate`);
 * - it sends `notifications/tools/list_changed` on command or in a bounded loop, and counts the reads;
 * - it can require a credential (bearer, a header, or an OAuth token from its own `/oauth/token`, whose
 *   error can quote the client's Basic credentials).
 *
 * Controlled by the methods of the returned handle, or over HTTP (`/control/*`, same process or not):
 * `GET /control/state`, `POST /control/configure` (a partial HostileConfig, `notify` to announce it),
 * `POST /control/list-changed` (`{count?, interval_ms?, max_ms?}`), `POST /control/reset`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type EchoMode, type HostileTool, type ToolSpec, expandSpec, headerForms, headerFormsText } from './hostile-tools';
import { serveFixture } from './fixture-http';
import { json, readJson, readText } from './http-body';
import { sendListChanged, watchStandalone } from './list-changed';
import { TokenIssuer } from './oauth-token';

/** How a failing step answers: an HTTP 502 whose body quotes the request, or a JSON-RPC error that quotes its headers. */
export type HostileFailure = 'http_502' | 'mcp_error';

export interface HostileConfig {
  /** what tools/list offers (in this order) */
  tools: ToolSpec[];
  /** flapping: when set, each read of the list (a tools/list without a cursor) alternates `tools` and this */
  alternate: ToolSpec[] | null;
  /** tools per tools/list page; 0: every tool in one page */
  pageSize: number;
  /** steps that fail, and how; `token: "echo"` makes /oauth/token refuse with the client's credentials quoted */
  fail: { initialize?: 'http_502'; list?: HostileFailure; call?: HostileFailure; token?: 'echo' };
}

export interface HostileOptions {
  port?: number;
  host?: string;
  /** names this upstream in plain tools' answers (`<label>:<tool>:<arguments>`), to tell two upstreams apart */
  label?: string;
  /** when set, an MCP request must carry one of these (else 401 with a Bearer challenge) */
  auth?: { bearer?: string; header?: { name: string; value: string }; oauth?: boolean };
  /** the client /oauth/token accepts (default FIXTURE_CLIENT: `fixture-client` / `fixture-secret`) */
  oauthClient?: { id: string; secret: string };
  config?: Partial<HostileConfig>;
}

/** Counts since the start (or the last reset). */
export interface HostileStats {
  /** HTTP requests on /mcp */
  requests: number;
  /** JSON-RPC requests by method (`initialize`, `tools/list`, `tools/call`, ...) */
  methods: Record<string, number>;
  /** reads of the tool list: tools/list requests without a cursor (a sync reads one, then pages) */
  listings: number;
  /** tools/list requests with a cursor (pages after the first) */
  pages: number;
  /** notifications/tools/list_changed sent (one per open session per notice) */
  listChangedSent: number;
  /** requests refused for a missing or wrong credential */
  unauthorized: number;
  /** requests to /oauth/token */
  tokenRequests: number;
}

/** One JSON-RPC message received, with the HTTP headers that carried it. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  at: number;
}

export interface HostileUpstream {
  /** `http://host:port` */
  url: string;
  /** the MCP endpoint: `<url>/mcp` */
  mcpUrl: string;
  /** the OAuth client-credentials endpoint (HostileOptions.oauthClient): `<url>/oauth/token` */
  tokenUrl: string;
  label: string;
  /** the configuration in force */
  readonly config: HostileConfig;
  /** changes the configuration; `notify` (default true) sends tools/list_changed to every open session */
  configure(patch: Partial<HostileConfig>, o?: { notify?: boolean }): Promise<void>;
  /** one tools/list_changed to every open session; the number of sessions told */
  listChanged(): Promise<number>;
  /**
   * tools/list_changed to every open session, `count` times (default 100) every `intervalMs` (default 10),
   * stopping after `maxMs` (default 30 s) or stopFlood(): resolves with the notices sent.
   */
  flood(o?: { count?: number; intervalMs?: number; maxMs?: number }): Promise<number>;
  stopFlood(): void;
  stats(): HostileStats;
  /** the newest 1000 JSON-RPC messages received, oldest first */
  received(): ReceivedRequest[];
  /** OAuth access tokens issued by /oauth/token */
  tokens(): string[];
  openSessions(): number;
  /** zeroes the stats and forgets the received requests (the configuration stays) */
  reset(): void;
  close(): Promise<void>;
}

const MAX_RECEIVED = 1000;

export const DEFAULT_HOSTILE_CONFIG: HostileConfig = { tools: [{ kind: 'echo_headers' }, { kind: 'plain', name: 'ping', description: 'Answers pong.' }], alternate: null, pageSize: 0, fail: {} };

interface Session {
  server: Server;
  transport: StreamableHTTPServerTransport;
  standalone: boolean;
  listChangedPending: boolean;
}

export async function startHostileUpstream(o: HostileOptions = {}): Promise<HostileUpstream> {
  const label = o.label ?? 'hostile';
  let config: HostileConfig = { ...DEFAULT_HOSTILE_CONFIG, ...o.config, fail: { ...(o.config?.fail ?? {}) } };
  const tokens = new TokenIssuer(o.oauthClient);
  const sessions = new Map<string, Session>();
  const received: ReceivedRequest[] = [];
  const zero = (): HostileStats => ({ requests: 0, methods: {}, listings: 0, pages: 0, listChangedSent: 0, unauthorized: 0, tokenRequests: 0 });
  let stats = zero();
  /** which list a read serves: 0 `tools`, 1 `alternate` (flipped on every read when flapping) */
  let phase = 0;
  let flooding: AbortController | undefined;
  const expanded = new WeakMap<ToolSpec, HostileTool[]>();
  const shutdown = new AbortController();

  const listOf = (p: number): HostileTool[] => {
    const specs = p === 1 && config.alternate ? config.alternate : config.tools;
    return specs.flatMap((s) => {
      let tools = expanded.get(s);
      if (!tools) expanded.set(s, (tools = expandSpec(s)));
      return tools;
    });
  };

  /** One page of tools/list (the read's phase flips on a read without a cursor when flapping). */
  const listPage = (cursor: unknown, headers: IncomingHttpHeaders): { tools: HostileTool[]; nextCursor?: string } => {
    if (config.fail.list === 'mcp_error') throw new McpError(ErrorCode.InternalError, `tools/list failed for the request:\n${headerFormsText(headers)}`);
    let p = phase;
    let from = 0;
    if (cursor === undefined) {
      if (config.alternate) p = phase = 1 - phase;
    } else {
      const m = typeof cursor === 'string' ? /^([01]):(\d+)$/.exec(cursor) : null;
      if (!m) throw new McpError(ErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(cursor)}`);
      [p, from] = [Number(m[1]), Number(m[2])];
    }
    const all = listOf(p);
    if (!config.pageSize) return { tools: all };
    const next = from + config.pageSize;
    return { tools: all.slice(from, next), ...(next < all.length ? { nextCursor: `${p}:${next}` } : {}) };
  };

  const mcpServer = (): Server => {
    const server = new Server({ name: `agw-hostile-${label}`, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    // answered by `mcp` below as plain JSON; this handler serves a tools/list inside a JSON-RPC batch
    server.setRequestHandler(ListToolsRequestSchema, async (req, extra) => {
      const page = listPage(req.params?.cursor, extra.requestInfo?.headers ?? {});
      return { tools: page.tools.map((t) => t.definition), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const headers = extra.requestInfo?.headers ?? {};
      if (config.fail.call === 'mcp_error') throw new McpError(ErrorCode.InternalError, `tools/call failed for the request:\n${headerFormsText(headers)}`);
      const tool = [...listOf(0), ...(config.alternate ? listOf(1) : [])].find((t) => t.definition.name === req.params.name);
      const args = req.params.arguments ?? {};
      if (!tool) return { content: [{ type: 'text', text: `unknown tool ${req.params.name}` }], isError: true };
      if (tool.answer === 'plain') return { content: [{ type: 'text', text: `${label}:${req.params.name}:${JSON.stringify(args)}` }] };
      const mode = (typeof args.mode === 'string' ? args.mode : 'result') as EchoMode;
      if (mode === 'mcp_error') throw new McpError(ErrorCode.InternalError, `the upstream refused the request:\n${headerFormsText(headers)}`);
      const forms = headerForms(headers);
      return {
        content: Object.entries(forms).map(([form, text]) => ({ type: 'text' as const, text: `[${form}]\n${text}` })),
        structuredContent: { headers: JSON.parse(forms.json) as Record<string, string> },
        ...(mode === 'is_error' ? { isError: true } : {}),
      };
    });
    return server;
  };

  const notifyAll = async (): Promise<number> => {
    const open = [...sessions.values()];
    await Promise.all(
      open.map((s) => {
        stats.listChangedSent++;
        return sendListChanged(s);
      }),
    );
    return open.length;
  };

  const authorized = (req: IncomingMessage): boolean => {
    const a = o.auth;
    if (!a) return true;
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (a.bearer !== undefined && bearer === a.bearer) return true;
    if (a.header && req.headers[a.header.name.toLowerCase()] === a.header.value) return true;
    return Boolean(a.oauth && bearer !== undefined && tokens.valid(bearer));
  };

  /** Counts and records the JSON-RPC messages of a POST; the first failure configured for one of them. */
  const inspect = (req: IncomingMessage, parsed: unknown): 'initialize' | 'list' | 'call' | 'echo_502' | undefined => {
    let fail: ReturnType<typeof inspect>;
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      const method = typeof m?.method === 'string' ? (m.method as string) : undefined;
      if (!method) continue;
      stats.methods[method] = (stats.methods[method] ?? 0) + 1;
      received.push({ method, headers: { ...req.headers }, at: Date.now() });
      if (received.length > MAX_RECEIVED) received.shift();
      if (method === 'tools/list') {
        if (m.params?.cursor === undefined) stats.listings++;
        else stats.pages++;
        if (config.fail.list === 'http_502') fail ??= 'list';
      }
      if (method === 'initialize' && config.fail.initialize === 'http_502') fail ??= 'initialize';
      if (method === 'tools/call') {
        if (config.fail.call === 'http_502') fail ??= 'call';
        if (m.params?.arguments?.mode === 'http_502') fail ??= 'echo_502';
      }
    }
    return fail;
  };

  const mcp = async (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    const text = req.method === 'POST' ? await readText(req) : '';
    if (!authorized(req)) {
      stats.unauthorized++;
      return res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="agw-hostile"' }).end(JSON.stringify({ error: 'unauthorized' }));
    }
    let parsed: unknown;
    if (req.method === 'POST') {
      try {
        parsed = JSON.parse(text);
      } catch {
        return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'Parse error' } });
      }
      if (inspect(req, parsed)) return res.writeHead(502, { 'content-type': 'text/plain' }).end(`Bad gateway. The request was ${req.method} ${req.url}\n${headerFormsText(req.headers)}\n${text}`);
    }
    const id = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(id) ? id[0] : id;
    if (sessionId) {
      const s = sessions.get(sessionId);
      if (!s) return json(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
      // tools/list is answered here, as JSON (Streamable HTTP allows it): the SDK server validates its own
      // result with recursive schemas, which a hostile definition (10,000 levels of nesting) overflows
      const m = parsed as { method?: unknown; id?: unknown; params?: { cursor?: unknown } } | undefined;
      if (m && !Array.isArray(m) && m.method === 'tools/list' && m.id !== undefined) {
        try {
          const page = listPage(m.params?.cursor, req.headers);
          const tools = page.tools.map((t) => t.json ?? JSON.stringify(t.definition)).join(',');
          const next = page.nextCursor ? `,"nextCursor":${JSON.stringify(page.nextCursor)}` : '';
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"tools":[${tools}]${next}}}`);
        } catch (e) {
          const err = e instanceof McpError ? e : new McpError(ErrorCode.InternalError, (e as Error).message);
          return json(res, 200, { jsonrpc: '2.0', id: m.id, error: { code: err.code, message: err.message.replace(/^MCP error -?\d+: /, '') } });
        }
      }
      if (req.method === 'GET') watchStandalone(s, res);
      return s.transport.handleRequest(req, res, parsed);
    }
    if (req.method !== 'POST') return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: no session' } });
    const server = mcpServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, { server, transport, standalone: false, listChangedPending: false }),
      onsessionclosed: (sid) => void sessions.delete(sid),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  };

  const flood = async (f: { count?: number; intervalMs?: number; maxMs?: number } = {}): Promise<number> => {
    flooding?.abort();
    const stop = (flooding = new AbortController());
    const count = f.count ?? 100;
    const until = Date.now() + (f.maxMs ?? 30_000);
    let sent = 0;
    while (sent < count && Date.now() < until && !stop.signal.aborted && !shutdown.signal.aborted) {
      await notifyAll();
      sent++;
      if (sent < count) await new Promise((r) => setTimeout(r, f.intervalMs ?? 10));
    }
    return sent;
  };

  const handle: HostileUpstream = {
    url: '',
    mcpUrl: '',
    tokenUrl: '',
    label,
    get config() {
      return config;
    },
    configure: async (patch, c = {}) => {
      config = { ...config, ...patch, fail: { ...(patch.fail ?? config.fail) } };
      if (c.notify ?? true) await notifyAll();
    },
    listChanged: notifyAll,
    flood,
    stopFlood: () => flooding?.abort(),
    stats: () => ({ ...stats, methods: { ...stats.methods }, tokenRequests: tokens.requests }),
    received: () => [...received],
    tokens: () => tokens.issued(),
    openSessions: () => sessions.size,
    reset: () => {
      stats = zero();
      tokens.requests = 0;
      received.length = 0;
    },
    close: async () => {
      if (!server.beginClose()) return;
      shutdown.abort();
      flooding?.abort();
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
      await server.close();
    },
  };

  const control = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (req.method === 'GET' && path === '/control/state') return json(res, 200, { label, config: summary(config), stats: handle.stats(), sessions: sessions.size, tokens: tokens.issued().length });
    if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' });
    const body = (await readJson(req)) as Record<string, unknown>;
    switch (path) {
      case '/control/configure': {
        const { notify, page_size, ...patch } = body as Partial<HostileConfig> & { notify?: boolean; page_size?: number };
        const bad = checkPatch({ ...patch, ...(page_size !== undefined ? { pageSize: page_size } : {}) });
        if (bad) return json(res, 400, { error: bad });
        await handle.configure({ ...patch, ...(page_size !== undefined ? { pageSize: page_size } : {}) }, { notify: notify !== false });
        return json(res, 200, { config: summary(config) });
      }
      case '/control/list-changed': {
        const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
        return json(res, 200, { sent: await flood({ count: num(body.count) ?? 1, intervalMs: num(body.interval_ms), maxMs: num(body.max_ms) }) });
      }
      case '/control/reset':
        handle.reset();
        return json(res, 200, { ok: true });
      default:
        return json(res, 404, { error: `no control ${path}` });
    }
  };

  const server = await serveFixture(o, 'closing', async (req, res, url) => {
    const path = url.pathname;
    if (path === '/mcp') return mcp(req, res);
    if (path.startsWith('/control/')) return control(req, res, path);
    if (path === '/oauth/token' && req.method === 'POST') {
      const body = await readText(req);
      if (config.fail.token === 'echo') {
        tokens.requests++;
        return json(res, 400, { error: 'invalid_request', error_description: `refused the request:\n${headerFormsText(req.headers)}\n${body}` });
      }
      return tokens.handle(req, body, res);
    }
    json(res, 404, { error: `nothing at ${path}` });
  });
  handle.url = server.url;
  handle.mcpUrl = `${handle.url}/mcp`;
  handle.tokenUrl = `${handle.url}/oauth/token`;
  return handle;
}

/** A configuration without its expanded definitions (what /control/state shows). */
function summary(c: HostileConfig) {
  return { tools: c.tools, alternate: c.alternate, page_size: c.pageSize, fail: c.fail };
}

function checkPatch(p: Partial<HostileConfig>): string | undefined {
  const specs = (v: unknown) => Array.isArray(v) && v.every((s) => s && typeof s === 'object' && typeof (s as { kind?: unknown }).kind === 'string');
  if (p.tools !== undefined && !specs(p.tools)) return 'tools is a list of tool specs ({kind, ...})';
  if (p.alternate !== undefined && p.alternate !== null && !specs(p.alternate)) return 'alternate is null or a list of tool specs';
  if (p.pageSize !== undefined && !(Number.isInteger(p.pageSize) && p.pageSize >= 0)) return 'page_size is an integer >= 0';
  if (p.fail !== undefined && (typeof p.fail !== 'object' || p.fail === null)) return 'fail is an object';
  return undefined;
}

