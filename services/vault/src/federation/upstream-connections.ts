/**
 * The vault's MCP client connections to tenants' upstream servers (docs/federation.md, "Connections and
 * limits"): one `@modelcontextprotocol/client` (SDK v2) Client per (tenant, upstream), opened on first use,
 * with the protocol revision negotiated (`server/discover` first: 2026-07-28 when the upstream offers it,
 * else the 2025 `initialize` handshake, 2025-03-26 … 2025-11-25; an upstream of the old SSE transport is
 * always a 2025 one), kept while
 * used and closed after FEDERATION_IDLE_MS idle (or when more than FEDERATION_MAX_CONNECTIONS are open, the
 * least recently used first). Every HTTP request goes through the egress rule (`@agw/egress` pinned fetch:
 * the upstream's address checked once per request and connected to as checked, no redirects, a byte cap
 * per response) with the credential's headers added per request, so an OAuth token refreshed after a 401
 * is used by the next request.
 *
 * What a hostile upstream can do is bounded here: connect and call deadlines (an upstream that never
 * answers, or streams notifications forever, ends in a timeout), a byte cap on every response (an
 * oversized result fails that call, nothing more), malformed JSON-RPC fails the request that met it.
 * Failures are `UpstreamCallError`s with an outcome the executor maps to the agent's answer. An upstream's
 * error text is kept only where it is an MCP answer (a JSON-RPC error); the body of a failed HTTP request
 * is never reflected (an internal page reached through an egress exception stays unread).
 *
 * Secrets are masked per call, whatever connection it uses: every request of a connection records the
 * secrets its credential headers carried, and each call's result, error and tool list is masked with
 * every secret its connection has sent, so the call's own request and every earlier one (a token
 * refreshed mid-connection, the registration's first request) are covered (secret-masker.ts: the raw,
 * JSON-, `\u`-, URL- and base64-encoded forms).
 */
import {
  type CallToolResult,
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  SseError,
  StreamableHTTPClientTransport,
  LOG_LEVEL_META_KEY,
  type Tool,
  specTypeSchemas,
} from '@modelcontextprotocol/client';
import * as z from 'zod/v4';
import type { Logger } from '@agw/shared';
import { EgressRefusedError, EgressRequestError } from '@agw/egress';
import { SecretMasker } from '../secrets/secret-masker';
import { type NotificationWish, NotificationRelay, relayOfCurrentCall, withRelay } from './call-notifications';
import { UpstreamAuthError } from './upstream-credentials';

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export const GATEWAY_CLIENT_INFO = { name: 'agw-governance-gateway', version: '1.0.0' };

/** What the connector needs to know of an upstream. */
export interface UpstreamEndpoint {
  tenantId: string;
  name: string;
  url: string;
  transport: 'streamable_http' | 'sse';
  /** changes when the upstream is registered again: a connection of an older version is replaced */
  version: string;
  /** the credential's headers for one request, and the secrets they carry (masked in every answer) */
  credentialHeaders(): Promise<{ headers: Record<string, string>; secrets: string[] }>;
  /** a per_user oauth upstream: the human whose connection this is (a connection of its own) */
  userId?: string;
  /** the upstream answered 401: drop a cached token before the one retry */
  onUnauthorized?(): void;
  timeoutMs?: number;
}

export type UpstreamOutcome = 'upstream_error' | 'unreachable' | 'timeout' | 'too_large' | 'protocol_error' | 'blocked' | 'auth_failed' | 'authorization_required' | 'cancelled';

/** The connection key of an endpoint: one per (tenant, upstream), and per human for a per_user one. */
const keyOf = (tenantId: string, name: string, userId?: string) => `${tenantId}|${name}${userId ? `#${userId}` : ''}`;

export class UpstreamCallError extends Error {
  constructor(
    readonly outcome: UpstreamOutcome,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamCallError';
  }
}

export interface ConnectionOptions {
  /** the egress fetch of a tenant (its own address rule: the ranges granted to it, docs/federation.md "Egress") */
  fetchOf(tenantId: string): FetchLike;
  logger: Logger;
  connectTimeoutMs: number;
  callTimeoutMs: number;
  /** largest tool result (its JSON) returned to the agent */
  maxResultBytes: number;
  maxTools: number;
  /** largest tool definition (its JSON, every key, string and number counted) kept of an upstream */
  maxToolBytes: number;
  /** most bytes of tool definitions read in one tools/list (all pages) */
  maxSyncBytes: number;
  idleMs: number;
  maxConnections: number;
  /** an upstream said notifications/tools/list_changed */
  onToolsChanged(tenantId: string, upstream: string): void;
}

interface Open {
  version: string;
  client: Promise<Client>;
  lastUsed: number;
  /** in-flight calls, aborted when a response of this connection went over the byte cap */
  inflight: Set<AbortController>;
  /** every secret a request of this connection carried (the newest MAX_SECRETS), and their masker */
  secrets: Set<string>;
  masker: SecretMasker;
  /** the tool definitions the last tools/list of this connection kept, by name */
  tools: Map<string, Tool>;
}

/** What a relayed round of a tools/call carries (callTool). */
export interface CallRound {
  /** the caller relays an upstream's input_required (else it is refused as an error) */
  relay?: boolean;
  /** what the agent's MCP client answers (elicitation, sampling, roots): declared to a 2026-07-28 upstream for this call */
  clientCapabilities?: Record<string, unknown>;
  /** the client's answers to the upstream's input requests of the round before */
  inputResponses?: Record<string, unknown>;
  /** the upstream's own requestState of the round before, echoed byte for byte */
  requestState?: string;
  /** the caller gave up (the agent's request closed): the upstream call is cancelled */
  signal?: AbortSignal;
  /** what the upstream sends during the call that the caller relays to its client (call-notifications.ts) */
  notifications?: NotificationWish;
}

const MAX_SECRETS = 16;

/** A tool the upstream offered that was not kept: its definition is over the byte cap or nests too deep. */
export interface RefusedTool {
  name: string;
  /** `70000 bytes` or `nested deeper than 64 levels` */
  why: string;
}

/** A tool definition nests at most this many objects and arrays (what every recursive reader of it can take). */
export const MAX_TOOL_DEPTH = 64;

/** Whether `v` nests deeper than `limit` objects/arrays; iterative, so any depth is measured safely. */
export function nestsDeeperThan(v: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length) {
    const [x, depth] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** One read of an upstream's tools, bounded by the tool count, the per-tool cap and the per-read budget. */
export interface ToolListing {
  tools: Tool[];
  /** tools over maxToolBytes: neither stored nor scanned */
  refused: RefusedTool[];
  /** why the listing stopped before the upstream's last page, if it did */
  truncated: string | null;
  info: UpstreamInfo;
}

/** The server an upstream said it is. */
export interface UpstreamInfo {
  name: string;
  version: string;
  protocol_version: string;
}

/** The most characters of an error's own text kept in a reason. */
const MAX_REASON = 300;

/** The HTTP status of a failed request, as the SDK's transports report it (their message holds the body). */
function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof SdkHttpError && err.status >= 400) return err.status;
  const code = (err as { code?: unknown })?.code;
  if (err instanceof SseError && typeof code === 'number' && code >= 400) return code;
  const m = err instanceof Error ? /\(HTTP (\d{3})\)|^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(err.message) : null;
  return m ? Number(m[1] ?? m[2]) : undefined;
}

/** An error and its causes, the outermost first (the SDK wraps a fetch's error as its cause). */
function causesOf(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let x = err; x !== undefined && x !== null && chain.length < 6; x = (x as { cause?: unknown }).cause) {
    chain.push(x);
    if (typeof x !== 'object') break;
  }
  return chain;
}

/** What the SDK calls an answer a 2026-07-28 upstream sends when it needs the client's input first (SEP-2322). */
export interface InputRequiredAnswer {
  resultType: 'input_required';
  inputRequests?: Record<string, unknown>;
  requestState?: string;
}

export const isInputRequired = (r: unknown): r is InputRequiredAnswer => (r as { resultType?: unknown })?.resultType === 'input_required';

/**
 * A page of tools/list as the upstream sent it: each tool the very object its JSON parsed into, every field
 * in the upstream's key order (the SDK's ListToolsResultSchema, which validates it besides, rebuilds each
 * object in its own field order and drops the fields it does not know).
 */
const RawToolsPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** At most this many pages of one tools/list are read. */
const MAX_PAGES = 1000;

/**
 * Adds the secrets a request carried to its connection's, keeping the MAX_SECRETS most recently sent: a
 * secret sent again moves to the newest end, so one in use on every request (an OAuth client's secret) is
 * never dropped behind the access tokens that rotate past it.
 */
export function remember(open: Pick<Open, 'secrets' | 'masker'>, secrets: string[]): void {
  let added = false;
  for (const s of secrets) {
    if (open.secrets.delete(s)) {
      open.secrets.add(s);
      continue;
    }
    open.secrets.add(s);
    added = true;
  }
  if (!added) return;
  while (open.secrets.size > MAX_SECRETS) open.secrets.delete(open.secrets.values().next().value as string);
  open.masker = new SecretMasker(open.secrets);
}

export class UpstreamConnections {
  private readonly open = new Map<string, Open>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly o: ConnectionOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(o.idleMs, 30_000)));
    this.sweeper.unref();
  }

  /**
   * Reads the upstream's tools, page by page: at most maxTools, a tool over maxToolBytes or nested deeper
   * than MAX_TOOL_DEPTH is refused (not kept), and the pages read stop at maxSyncBytes; `truncated` says which bound ended the read. The tools
   * are masked (a definition may quote the request's headers), and otherwise the upstream's own objects:
   * every field, in its key order.
   */
  async listTools(e: UpstreamEndpoint): Promise<ToolListing> {
    return this.use(e, async (client, signal, open) => {
      const tools: Tool[] = [];
      // a server of resources or prompts only (no tools capability) has no tools/list to read
      const caps = client.getServerCapabilities();
      if (caps && !caps.tools && (caps.resources || caps.prompts)) return { tools, refused: [], truncated: null, info: this.infoOf(client) };
      const refused: RefusedTool[] = [];
      let bytes = 0;
      let truncated: string | null = null;
      let cursor: string | undefined;
      pages: for (let page = 0; ; page++) {
        if (page === MAX_PAGES) {
          truncated = `the upstream's tools/list has more than ${MAX_PAGES} pages; the first ${MAX_PAGES} are read`;
          break;
        }
        const r = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, RawToolsPage, { timeout: this.timeoutOf(e), signal });
        // valid MCP or the read fails, as the SDK's listTools would; what is kept is the raw tool
        // a tool nested too deep is refused below, unread: v2's schema validates JSON values recursively
        const deep = new Set(r.tools.filter((t) => nestsDeeperThan(t, MAX_TOOL_DEPTH)));
        const valid = await specTypeSchemas.ListToolsResult['~standard'].validate({ tools: r.tools.filter((t) => !deep.has(t)), ...(r.nextCursor !== undefined ? { nextCursor: r.nextCursor } : {}) });
        if (valid.issues) {
          const first = valid.issues[0];
          throw new UpstreamCallError('protocol_error', `upstream ${e.name} sent a tools/list that is not valid MCP: ${(first?.path ?? []).map((p) => (typeof p === 'object' ? String(p.key) : String(p))).join('.')} ${first?.message ?? ''}`.slice(0, MAX_REASON));
        }
        for (const tool of r.tools as Tool[]) {
          const name = typeof tool.name === 'string' ? tool.name.slice(0, 64) : '';
          // measured before anything recursive reads it (JSON.stringify, the fingerprint, the scanner, jsonb)
          if (deep.has(tool)) {
            refused.push({ name, why: `nested deeper than ${MAX_TOOL_DEPTH} levels` });
            continue;
          }
          const size = Buffer.byteLength(JSON.stringify(tool));
          bytes += size;
          if (bytes > this.o.maxSyncBytes) {
            truncated = `the upstream's tool definitions are larger than FEDERATION_MAX_SYNC_BYTES (${this.o.maxSyncBytes} bytes in one read); the tools read before are kept`;
            break pages;
          }
          if (size > this.o.maxToolBytes) {
            refused.push({ name, why: `${size} bytes` });
            continue;
          }
          if (tools.length === this.o.maxTools) {
            truncated = `the upstream offers more tools than FEDERATION_MAX_TOOLS; the first ${this.o.maxTools} are kept`;
            break pages;
          }
          tools.push(tool);
        }
        cursor = r.nextCursor;
        if (!cursor) break;
      }
      // the definitions the calls of this connection name (header mirroring of 2026-07-28, below)
      open.tools = new Map(tools.map((t) => [t.name, t]));
      return { tools: open.masker.value(tools), refused, truncated, info: this.infoOf(client) };
    });
  }

  /**
   * One tools/call; the result as the upstream sent it, masked, its JSON at most maxResultBytes. A
   * 2026-07-28 upstream that needs input first (SEP-2322) is refused here unless `round` says the caller
   * relays it: then its `input_required` answer is the result, and `round` carries the client's answer
   * to an earlier one (`inputResponses`, the upstream's own `requestState`) back to it.
   */
  async callTool(e: UpstreamEndpoint, tool: string, args: Record<string, unknown>, round?: CallRound): Promise<{ result: CallToolResult | InputRequiredAnswer; json: string }> {
    return this.use(e, async (client, signal, open) => {
      // the definition is given for header mirroring only; the result is passed on unvalidated against
      // its outputSchema (the client that receives it validates), so an input_required round is not refused
      const def = open.tools.get(tool);
      const modern = client.getProtocolEra() === 'modern';
      const relayed = round?.relay && modern;
      // what the upstream sends during the call, bounded and masked, to the caller (a 2026-07-28 upstream
      // sends log messages only at the level a request asks for; a 2025 one's are filtered by the relay)
      const notes = round?.notifications ? new NotificationRelay(round.notifications, () => open.masker) : undefined;
      const meta = {
        ...(relayed && round?.clientCapabilities ? { 'io.modelcontextprotocol/clientCapabilities': round.clientCapabilities } : {}),
        ...(modern && notes?.logLevel ? { [LOG_LEVEL_META_KEY]: notes.logLevel } : {}),
      };
      const params = {
        name: tool,
        arguments: args,
        ...(Object.keys(meta).length ? { _meta: meta } : {}),
        ...(relayed && round?.inputResponses ? { inputResponses: round.inputResponses } : {}),
        ...(relayed && round?.requestState !== undefined ? { requestState: round.requestState } : {}),
      };
      let sent: CallToolResult | InputRequiredAnswer;
      try {
        // an aborted call is cancelled at the upstream too (the SDK cancels the request it sent)
        sent = (await withRelay(notes, () =>
          client.callTool(params as never, {
            timeout: this.timeoutOf(e),
            signal: round?.signal ? AbortSignal.any([signal, round.signal]) : signal,
            allowInputRequired: true,
            ...(def ? { toolDefinition: { ...def, outputSchema: undefined } } : {}),
            // the SDK sends a progressToken of its own and hands this call's progress here
            ...(notes?.wantsProgress ? { onprogress: (p: { progress?: unknown; total?: unknown; message?: unknown }) => notes.progress(p) } : {}),
          }),
        )) as CallToolResult | InputRequiredAnswer;
      } catch (err) {
        if (round?.signal?.aborted && !signal.aborted) throw new UpstreamCallError('cancelled', `the agent cancelled the call of ${tool}; the request to upstream ${e.name} was cancelled`);
        throw err;
      }
      if (notes?.dropped) this.o.logger.warn({ tenantId: e.tenantId, upstream: e.name, tool, dropped: notes.dropped }, 'upstream sent more notifications during a call than are relayed; the rest were dropped');
      if (isInputRequired(sent) && !round?.relay) {
        throw new UpstreamCallError('upstream_error', `upstream ${e.name} needs input before tool ${tool} can answer (input_required); the gateway relays it to MCP clients of revision 2026-07-28 only, and this call came another way`);
      }
      if ((sent as { resultType?: unknown }).resultType === 'complete') delete (sent as { resultType?: unknown }).resultType;
      const result = open.masker.value(sent);
      const json = JSON.stringify(result);
      if (Buffer.byteLength(json) > this.o.maxResultBytes) throw new UpstreamCallError('too_large', `the upstream's result is larger than ${this.o.maxResultBytes} bytes`);
      return { result, json };
    });
  }

  /**
   * One request of another MCP method on the upstream's client (resources, prompts, completions:
   * federated-mcp.ts), bounded and masked as a tool call is: the call deadline, the connection's secrets
   * masked in the result, its JSON at most maxResultBytes.
   */
  async request<T>(e: UpstreamEndpoint, fn: (client: Client, options: { timeout: number; signal: AbortSignal; cacheMode: 'bypass' }) => Promise<T>): Promise<T> {
    return this.use(e, async (client, signal, open) => {
      // every read goes to the upstream (the catalog caches lists itself; a read is a governed call)
      const result = open.masker.value(await fn(client, { timeout: this.timeoutOf(e), signal, cacheMode: 'bypass' }));
      if (Buffer.byteLength(JSON.stringify(result) ?? '') > this.o.maxResultBytes) throw new UpstreamCallError('too_large', `the upstream's result is larger than ${this.o.maxResultBytes} bytes`);
      return result;
    });
  }

  /** The definition bounds of a tools/list, for the other lists (federated-mcp.ts). */
  get definitionLimits(): { maxToolBytes: number; maxSyncBytes: number } {
    return { maxToolBytes: this.o.maxToolBytes, maxSyncBytes: this.o.maxSyncBytes };
  }

  /** Close the connection of an upstream (deleted, or registered again): every human's, or one human's. */
  drop(tenantId: string, name: string, userId?: string): void {
    const base = keyOf(tenantId, name);
    for (const [key, open] of this.open) {
      if (userId !== undefined ? key !== keyOf(tenantId, name, userId) : key !== base && !key.startsWith(`${base}#`)) continue;
      this.open.delete(key);
      void open.client.then((c) => c.close()).catch(() => undefined);
    }
  }

  private dropKey(key: string): void {
    const open = this.open.get(key);
    if (!open) return;
    this.open.delete(key);
    void open.client.then((c) => c.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map((o) => o.client.then((c) => c.close()).catch(() => undefined)));
  }

  private timeoutOf(e: UpstreamEndpoint): number {
    return e.timeoutMs ?? this.o.callTimeoutMs;
  }

  private infoOf(client: Client): UpstreamInfo {
    const v = client.getServerVersion();
    return { name: v?.name ?? '', version: v?.version ?? '', protocol_version: client.getNegotiatedProtocolVersion() ?? '' };
  }

  /**
   * Runs `fn` on the upstream's client; a connection that failed under it is dropped and tried once more.
   * A failure's message is masked with the connection's secrets.
   */
  private async use<T>(e: UpstreamEndpoint, fn: (c: Client, signal: AbortSignal, open: Open) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const open = this.connection(e);
      const ctl = new AbortController();
      open.inflight.add(ctl);
      open.lastUsed = Date.now();
      try {
        return await fn(await open.client, ctl.signal, open);
      } catch (err) {
        const raw = ctl.signal.reason instanceof UpstreamCallError ? ctl.signal.reason : this.mapError(err, e);
        const mapped = new UpstreamCallError(raw.outcome, open.masker.text(raw.message));
        // a session the upstream forgot (restart) or a dropped stream: reconnect once; never after a call
        // that may have run (a timeout) or a refusal that would repeat
        if (attempt === 0 && mapped.outcome === 'unreachable' && this.open.get(keyOf(e.tenantId, e.name, e.userId)) === open) {
          this.dropKey(keyOf(e.tenantId, e.name, e.userId));
          continue;
        }
        throw mapped;
      } finally {
        open.inflight.delete(ctl);
        open.lastUsed = Date.now();
      }
    }
  }

  private connection(e: UpstreamEndpoint): Open {
    const key = keyOf(e.tenantId, e.name, e.userId);
    const existing = this.open.get(key);
    if (existing && existing.version === e.version) return existing;
    if (existing) this.dropKey(key);
    if (this.open.size >= this.o.maxConnections) this.evictOldest();
    const open: Open = { version: e.version, client: Promise.resolve(undefined as never), lastUsed: Date.now(), inflight: new Set(), secrets: new Set(), masker: new SecretMasker([]), tools: new Map() };
    open.client = this.connect(e, open);
    // a failed connect is not kept: the next call tries again
    open.client.catch(() => {
      if (this.open.get(key) === open) this.open.delete(key);
    });
    this.open.set(key, open);
    return open;
  }

  private async connect(e: UpstreamEndpoint, open: Open): Promise<Client> {
    const fetch = this.fetchFor(e, open);
    const url = new URL(e.url);
    const sse = e.transport === 'sse';
    const transport = sse ? new SSEClientTransport(url, { fetch }) : new StreamableHTTPClientTransport(url, { fetch, reconnectionOptions: { maxReconnectionDelay: 30_000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 2 } });
    const client = new Client(GATEWAY_CLIENT_INFO, {
      capabilities: {},
      // server/discover first over Streamable HTTP (2026-07-28 when offered, else the 2025 handshake); the old
      // SSE transport is 2025 only. An upstream's input_required is never answered here (callTool's `round`).
      versionNegotiation: { mode: sse ? 'legacy' : 'auto' },
      inputRequired: { autoFulfill: false },
    });
    client.setNotificationHandler('notifications/tools/list_changed', async () => this.o.onToolsChanged(e.tenantId, e.name));
    // a log message goes to the call whose request it came with, when that call relays them (call-notifications.ts)
    client.setNotificationHandler('notifications/message', async (n) => relayOfCurrentCall()?.log(n.params));
    client.onerror = (err) => this.o.logger.debug({ tenantId: e.tenantId, upstream: e.name, err: open.masker.text(err.message) }, 'upstream transport error');
    client.onclose = () => {
      const key = keyOf(e.tenantId, e.name, e.userId);
      if (this.open.get(key) === open) this.open.delete(key);
    };
    try {
      await client.connect(transport, { timeout: this.o.connectTimeoutMs });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw this.mapError(err, e);
    }
    return client;
  }

  /** The egress fetch with the credential's headers, a 401 retried once after the token was dropped. */
  private fetchFor(e: UpstreamEndpoint, open: Open): FetchLike {
    return async (url, init) => {
      const send = async () => {
        const headers = new Headers(init?.headers);
        const cred = await e.credentialHeaders();
        remember(open, cred.secrets);
        for (const [k, v] of Object.entries(cred.headers)) headers.set(k, v);
        headers.set('user-agent', `${GATEWAY_CLIENT_INFO.name}/${GATEWAY_CLIENT_INFO.version}`);
        return this.o.fetchOf(e.tenantId)(url, { ...init, headers });
      };
      let res = await send();
      if (res.status === 401 && e.onUnauthorized) {
        await res.body?.cancel().catch(() => undefined);
        e.onUnauthorized();
        res = await send();
      }
      if (!res.body || (init?.method ?? 'GET').toUpperCase() !== 'POST') return res;
      // a POST's body over the byte cap fails the calls in flight on this connection at once, with a clear
      // reason (the SDK would otherwise wait for their deadline on a stream that ended in error)
      const reader = res.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        pull: async (ctl) => {
          try {
            const { done, value } = await reader.read();
            if (done) ctl.close();
            else ctl.enqueue(value);
          } catch (err) {
            if (err instanceof EgressRequestError && err.kind === 'too_large') {
              const reason = new UpstreamCallError('too_large', `the upstream's answer is larger than the cap of ${this.o.maxResultBytes} bytes`);
              for (const c of open.inflight) c.abort(reason);
            }
            ctl.error(err);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }

  private mapError(err: unknown, e: UpstreamEndpoint): UpstreamCallError {
    if (err instanceof UpstreamCallError) return err;
    const chain = causesOf(err);
    const inner = chain.find((x) => x instanceof UpstreamCallError);
    if (inner) return inner as UpstreamCallError;
    // the credential could not be used (the token endpoint refused it): its own reason, not the upstream's
    // no connection (any more) for an upstream that needs OAuth: its own reason (upstream-oauth.ts)
    const missing = chain.find((x) => x instanceof Error && x.name === 'AuthorizationRequired');
    if (missing) return new UpstreamCallError('authorization_required', (missing as Error).message);
    const auth = chain.find((x) => x instanceof UpstreamAuthError);
    if (auth) return new UpstreamCallError('auth_failed', `upstream ${e.name}: ${(auth as Error).message}`);
    const egress = chain.find((x) => x instanceof EgressRequestError || x instanceof EgressRefusedError);
    if (egress instanceof EgressRefusedError) return new UpstreamCallError('blocked', `upstream address refused by the egress rule: ${egress.reason}`);
    if (egress instanceof EgressRequestError) {
      if (egress.kind === 'too_large') return new UpstreamCallError('too_large', `the upstream's answer is larger than the cap of ${this.o.maxResultBytes} bytes`);
      if (egress.kind === 'timeout' || egress.kind === 'connect_timeout') return new UpstreamCallError('timeout', `upstream ${e.name} did not answer in time (${egress.kind})`);
      return new UpstreamCallError('unreachable', `upstream ${e.name} unreachable: ${egress.message}`);
    }
    if (err instanceof SdkError && !(err instanceof SdkHttpError)) {
      if (err.code === SdkErrorCode.RequestTimeout) return new UpstreamCallError('timeout', `upstream ${e.name} did not answer within ${this.timeoutOf(e)} ms`);
      if (err.code === SdkErrorCode.ConnectionClosed) return new UpstreamCallError('unreachable', `upstream ${e.name} closed the connection`);
      if (err.code === SdkErrorCode.InvalidResult || err.code === SdkErrorCode.UnsupportedResultType || err.code === SdkErrorCode.ListPaginationExceeded) {
        return new UpstreamCallError('protocol_error', `upstream ${e.name} sent an answer that is not valid MCP: ${err.message}`.slice(0, MAX_REASON + 60));
      }
      // the revision probe (server/discover) failed: an answer that is no MCP, else the connection (its own text)
      if (err.code === SdkErrorCode.EraNegotiationFailed) {
        if (/unusable reply/.test(err.message)) return new UpstreamCallError('protocol_error', `upstream ${e.name} sent an answer that is not valid MCP: ${err.message}`.slice(0, MAX_REASON + 60));
        return new UpstreamCallError('unreachable', `upstream ${e.name} unreachable: ${err.message}`.slice(0, MAX_REASON + 60));
      }
    }
    if (err instanceof ProtocolError) {
      // a JSON-RPC error the upstream answered with (unknown tool, invalid params, ...)
      return new UpstreamCallError('upstream_error', `upstream ${e.name} answered with an error: ${err.message}`.slice(0, 1000));
    }
    const message = (err instanceof Error ? err.message : String(err)).slice(0, MAX_REASON);
    const status = httpStatusOf(err);
    if (status === 401 || /\b401\b|unauthori[sz]ed/i.test(message)) return new UpstreamCallError('auth_failed', `upstream ${e.name} refused the credential (401)`);
    // a failed HTTP request: its status, never its body (which may be any internal page the address reaches)
    if (status !== undefined) return new UpstreamCallError('unreachable', `upstream ${e.name} answered HTTP ${status}`);
    if (err instanceof SyntaxError || /JSON|parse|Unexpected content type|invalid_union|Invalid input|jsonrpc/i.test(message)) {
      return new UpstreamCallError('protocol_error', `upstream ${e.name} sent an answer that is not valid MCP: ${message}`);
    }
    if (/ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|fetch failed|socket|network|Error sending|Non-200/i.test(message)) {
      return new UpstreamCallError('unreachable', `upstream ${e.name} unreachable: ${message}`);
    }
    return new UpstreamCallError('protocol_error', `upstream ${e.name}: ${message}`);
  }

  private evictOldest(): void {
    let oldest: [string, Open] | undefined;
    for (const entry of this.open) if (!entry[1].inflight.size && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
    if (oldest) this.dropKey(oldest[0]);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, open] of this.open) {
      if (!open.inflight.size && now - open.lastUsed > this.o.idleMs) this.dropKey(key);
    }
  }
}
