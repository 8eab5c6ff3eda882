/**
 * MCP protocol revision 2026-07-28 on the gateway's MCP endpoints (docs/mcp.md, "Protocol revisions"): the
 * stateless revision without `initialize`, where every request carries its version in `_meta` and in the
 * `MCP-Protocol-Version` header. The registry's MCP SDK (1.32) does not serve it yet, so its HTTP rules
 * live here, in one module, written from the revision's text (basic/transports/streamable-http.mdx,
 * basic/versioning.mdx, server/discover.mdx); requests of the earlier revisions (2025-11-25, 2025-06-18,
 * 2025-03-26: `initialize` first) stay with the SDK's transport.
 *
 * - era: `MCP-Protocol-Version: 2026-07-28` (or a `_meta` version without the header) is modern; an
 *   earlier version, or neither, is legacy;
 * - header rules (-32020 HeaderMismatch, 400): the version header is required and equals
 *   `_meta["io.modelcontextprotocol/protocolVersion"]`; `Mcp-Method` equals `method`; `Mcp-Name` equals
 *   `params.name` / `params.uri` for tools/call, resources/read, prompts/get (the `=?base64?…?=` sentinel
 *   decoded first);
 * - an unknown version is -32022 UnsupportedProtocolVersion (400) listing what is supported;
 * - an unknown method (ping and logging/setLevel are gone in this revision) is 404 with -32601;
 * - `server/discover`; `resultType: "complete"` on every result, the server's identity in `_meta`, and
 *   `ttlMs` / `cacheScope` on cacheable results (tools/list, server/discover);
 * - multi round-trip requests (a tools/call's `requestState` and `inputResponses` handed to the call, whose
 *   result may be `input_required`) and the Tasks extension's `tasks/get`, `tasks/update`, `tasks/cancel`
 *   (`Mcp-Name` = `params.taskId`): approvals a client can wait for (approval-rounds.ts).
 */
import { ProtocolError } from '@modelcontextprotocol/server';

export const MODERN_VERSION = '2026-07-28';
/** every revision the endpoints serve: the modern one here, the earlier ones through the SDK */
export const SUPPORTED_VERSIONS = [MODERN_VERSION, '2025-11-25', '2025-06-18', '2025-03-26'];
const LEGACY_VERSIONS = new Set(SUPPORTED_VERSIONS.slice(1).concat('2024-11-05'));

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_SERVER = 'io.modelcontextprotocol/serverInfo';
export const ERR_HEADER_MISMATCH = -32020;
export const ERR_UNSUPPORTED_VERSION = -32022;
export const ERR_MISSING_CLIENT_CAPABILITY = -32021;
/** the request field each method's `Mcp-Name` header repeats (the Tasks extension: `taskId`) */
const NAMED_METHODS: Record<string, 'name' | 'uri' | 'taskId'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

type Headers = Record<string, string | string[] | undefined>;
export interface JsonRpcRequest {
  jsonrpc?: unknown;
  id?: string | number | null;
  method?: unknown;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
}

export type Era = { kind: 'legacy' } | { kind: 'modern'; request: JsonRpcRequest } | { kind: 'reject'; status: number; body: Record<string, unknown> };

const one = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);
const rpcError = (id: unknown, code: number, message: string, data?: unknown) => ({ jsonrpc: '2.0', id: id ?? null, error: { code, message, ...(data !== undefined ? { data } : {}) } });

/**
 * A JSON-RPC error of the gateway's MCP server: the SDK's ProtocolError (its transport answers it as
 * JSON-RPC, the message as written), also thrown by the 2026-07-28 module, which answers it the same way.
 */
export class RpcError extends ProtocolError {}

/** A header value as the revision allows it: plain visible ASCII, or the Base64 sentinel `=?base64?…?=`. */
export function decodeHeaderValue(v: string): string | null {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(v);
  if (m) {
    const text = Buffer.from(m[1], 'base64').toString('utf8');
    return Buffer.from(text, 'utf8').toString('base64').replace(/=+$/, '') === m[1].replace(/=+$/, '') ? text : null;
  }
  if (v.startsWith('=?base64?')) return null; // the sentinel's shape around something that is not Base64
  return /^[\x20-\x7e\t]*$/.test(v) && v === v.trim() ? v : null;
}

/** Which revision a POST speaks, or why it is refused (the transport's header rules). */
export function classify(headers: Headers, body: unknown): Era {
  const request = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as JsonRpcRequest;
  const header = one(headers['mcp-protocol-version']);
  const meta = request.params?._meta?.[META_VERSION];
  if (request.method === 'initialize') return { kind: 'legacy' };
  if (header === undefined && meta === undefined) return { kind: 'legacy' };
  if (header !== undefined && LEGACY_VERSIONS.has(header) && meta === undefined) return { kind: 'legacy' };
  const mismatch = (message: string) => ({ kind: 'reject' as const, status: 400, body: rpcError(request.id, ERR_HEADER_MISMATCH, `Header mismatch: ${message}`) });
  if (header === undefined) return mismatch('the MCP-Protocol-Version header is required');
  if (meta !== header) return mismatch(`MCP-Protocol-Version header value '${header}' does not match body value '${String(meta)}'`);
  if (header !== MODERN_VERSION) {
    return { kind: 'reject', status: 400, body: rpcError(request.id, ERR_UNSUPPORTED_VERSION, 'Unsupported protocol version', { supported: SUPPORTED_VERSIONS, requested: header }) };
  }
  const method = one(headers['mcp-method']);
  if (method === undefined) return mismatch('the Mcp-Method header is required');
  if (method !== request.method) return mismatch(`Mcp-Method header value '${method}' does not match body value '${String(request.method)}'`);
  const field = typeof request.method === 'string' ? NAMED_METHODS[request.method] : undefined;
  if (field) {
    const raw = one(headers['mcp-name']);
    if (raw === undefined) return mismatch('the Mcp-Name header is required');
    const name = decodeHeaderValue(raw);
    if (name === null) return mismatch('the Mcp-Name header value holds invalid characters');
    if (name !== request.params?.[field]) return mismatch(`Mcp-Name header value '${name}' does not match body value '${String(request.params?.[field])}'`);
  }
  return { kind: 'modern', request };
}

export interface ModernHandlers {
  serverInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
  /** seconds a client may reuse tools/list (the catalog's own cache time) */
  listTtlMs: number;
  listTools(): Promise<unknown[]>;
  /** a call, or a retry of one (multi round-trip: `requestState`, `inputResponses`); its result may be `input_required` or a task */
  callTool(name: string, args: Record<string, unknown>, round: CallRound): Promise<Record<string, unknown>>;
  /** the Tasks extension (io.modelcontextprotocol/tasks): a task's state, its cancellation */
  tasks: { get(taskId: string, meta: RequestMeta): Promise<Record<string, unknown>>; cancel(taskId: string, meta: RequestMeta): Promise<void>; update(taskId: string, meta: RequestMeta): Promise<void> };
  /** the other methods the server answers (resources, prompts, completions): undefined for one it does not */
  other?(method: string, params: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
}

export type RequestMeta = Record<string, unknown> | undefined;

/** What a tools/call carries besides the tool and its arguments (2026-07-28). */
export interface CallRound {
  /** the request's `_meta` (client capabilities among them) */
  meta: RequestMeta;
  /** the opaque state of an earlier `input_required` answer, echoed on the retry */
  requestState?: string;
  /** the client's answers to that answer's input requests */
  inputResponses?: Record<string, unknown>;
}

/** The answer to a modern request: HTTP status and JSON body (a notification is a bodyless 202). */
export async function answerModern(request: JsonRpcRequest, h: ModernHandlers): Promise<{ status: number; body?: Record<string, unknown> }> {
  if (request.id === undefined || request.id === null) return { status: 202 };
  const meta = { [META_SERVER]: h.serverInfo };
  const ok = (result: Record<string, unknown>) => ({ status: 200, body: { jsonrpc: '2.0', id: request.id, result: { resultType: 'complete', ...result, _meta: { ...(result._meta as object), ...meta } } } });
  switch (request.method) {
    case 'server/discover':
      return ok({ supportedVersions: SUPPORTED_VERSIONS, capabilities: h.capabilities, ttlMs: 3_600_000, cacheScope: 'private' });
    case 'tools/list':
      return ok({ tools: await h.listTools(), ttlMs: h.listTtlMs, cacheScope: 'private' });
    case 'tools/call': {
      const name = request.params?.name;
      const args = request.params?.arguments ?? {};
      const { requestState, inputResponses } = request.params ?? {};
      if (typeof name !== 'string' || typeof args !== 'object' || args === null || Array.isArray(args)) return { status: 200, body: rpcError(request.id, -32602, 'tools/call needs params.name (a string) and params.arguments (an object)') };
      if (requestState !== undefined && typeof requestState !== 'string') return { status: 200, body: rpcError(request.id, -32602, 'tools/call: params.requestState must be the string an earlier answer gave') };
      if (inputResponses !== undefined && (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))) {
        return { status: 200, body: rpcError(request.id, -32602, 'tools/call: params.inputResponses must be an object keyed by the input requests of the earlier answer') };
      }
      const round: CallRound = { meta: request.params?._meta, ...(requestState !== undefined ? { requestState } : {}), ...(inputResponses ? { inputResponses: inputResponses as Record<string, unknown> } : {}) };
      return ok(await h.callTool(name, args as Record<string, unknown>, round));
    }
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel': {
      const taskId = request.params?.taskId;
      if (typeof taskId !== 'string' || !taskId) return { status: 200, body: rpcError(request.id, -32602, `${request.method} needs params.taskId (a string)`) };
      const meta = request.params?._meta;
      if (request.method === 'tasks/get') return ok(await h.tasks.get(taskId, meta));
      await (request.method === 'tasks/cancel' ? h.tasks.cancel(taskId, meta) : h.tasks.update(taskId, meta));
      return ok({});
    }
    default: {
      const result = typeof request.method === 'string' && h.other ? await h.other(request.method, request.params ?? {}) : undefined;
      if (result) return ok(result);
      return { status: 404, body: rpcError(request.id, -32601, `Method not found: ${String(request.method)} (revision ${MODERN_VERSION})`) };
    }
  }
}
