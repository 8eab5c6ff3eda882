/**
 * The vault's MCP client connections to tenants' upstream servers (docs/federation.md, "Connections and
 * limits"): one `@modelcontextprotocol/sdk` Client per (tenant, upstream), opened on first use, kept while
 * used and closed after FEDERATION_IDLE_MS idle (or when more than FEDERATION_MAX_CONNECTIONS are open, the
 * least recently used first). Every HTTP request goes through the egress rule (`@agw/egress` pinned fetch:
 * the upstream's address checked once per request and connected to as checked, no redirects, a byte cap
 * per response) with the credential's headers added per request, so an OAuth token refreshed after a 401
 * is used by the next request.
 *
 * What a hostile upstream can do is bounded here: connect and call deadlines (an upstream that never
 * answers, or streams notifications forever, ends in a timeout), a byte cap on every response (an
 * oversized result fails that call, nothing more), malformed JSON-RPC fails the request that met it.
 * Failures are `UpstreamCallError`s with an outcome the executor maps to the agent's answer.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError, type Tool, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@agw/shared';
import { EgressRefusedError, EgressRequestError } from '@agw/egress';
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
  /** the credential's headers for one request (and the secret forms to mask in answers) */
  credentialHeaders(): Promise<{ headers: Record<string, string>; secrets: string[] }>;
  /** the upstream answered 401: drop a cached token before the one retry */
  onUnauthorized?(): void;
  timeoutMs?: number;
}

export type UpstreamOutcome = 'upstream_error' | 'unreachable' | 'timeout' | 'too_large' | 'protocol_error' | 'blocked' | 'auth_failed';

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
  fetch: FetchLike;
  logger: Logger;
  connectTimeoutMs: number;
  callTimeoutMs: number;
  /** largest tool result (its JSON) returned to the agent */
  maxResultBytes: number;
  maxTools: number;
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
}

/** The server an upstream said it is. */
export interface UpstreamInfo {
  name: string;
  version: string;
  protocol_version: string;
}

export class UpstreamConnections {
  private readonly open = new Map<string, Open>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly o: ConnectionOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(o.idleMs, 30_000)));
    this.sweeper.unref();
  }

  /** Reads every tool (all pages, at most maxTools); `truncated` when the upstream offered more. */
  async listTools(e: UpstreamEndpoint): Promise<{ tools: Tool[]; truncated: boolean; info: UpstreamInfo }> {
    return this.use(e, async (client, signal) => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1000; page++) {
        const r = await client.listTools(cursor ? { cursor } : {}, { timeout: this.timeoutOf(e), signal });
        tools.push(...r.tools);
        if (tools.length > this.o.maxTools) return { tools: tools.slice(0, this.o.maxTools), truncated: true, info: this.infoOf(client) };
        cursor = r.nextCursor;
        if (!cursor) break;
      }
      return { tools, truncated: false, info: this.infoOf(client) };
    });
  }

  /** One tools/call; the result as the upstream sent it, its JSON at most maxResultBytes. */
  async callTool(e: UpstreamEndpoint, tool: string, args: Record<string, unknown>): Promise<{ result: CallToolResult; json: string }> {
    return this.use(e, async (client, signal) => {
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: this.timeoutOf(e), signal })) as CallToolResult;
      const json = JSON.stringify(result);
      if (Buffer.byteLength(json) > this.o.maxResultBytes) throw new UpstreamCallError('too_large', `the upstream's result is larger than ${this.o.maxResultBytes} bytes`);
      return { result, json };
    });
  }

  /** Close the connection of an upstream (deleted, or registered again). */
  drop(tenantId: string, name: string): void {
    const key = `${tenantId}|${name}`;
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
    const t = client.transport as { protocolVersion?: string } | undefined;
    return { name: v?.name ?? '', version: v?.version ?? '', protocol_version: t?.protocolVersion ?? '' };
  }

  /** Runs `fn` on the upstream's client; a connection that failed under it is dropped and tried once more. */
  private async use<T>(e: UpstreamEndpoint, fn: (c: Client, signal: AbortSignal) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const open = this.connection(e);
      const ctl = new AbortController();
      open.inflight.add(ctl);
      open.lastUsed = Date.now();
      try {
        return await fn(await open.client, ctl.signal);
      } catch (err) {
        const mapped = ctl.signal.reason instanceof UpstreamCallError ? ctl.signal.reason : this.mapError(err, e);
        // a session the upstream forgot (restart) or a dropped stream: reconnect once; never after a call
        // that may have run (a timeout) or a refusal that would repeat
        if (attempt === 0 && mapped.outcome === 'unreachable' && this.open.get(`${e.tenantId}|${e.name}`) === open) {
          this.drop(e.tenantId, e.name);
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
    const key = `${e.tenantId}|${e.name}`;
    const existing = this.open.get(key);
    if (existing && existing.version === e.version) return existing;
    if (existing) this.drop(e.tenantId, e.name);
    if (this.open.size >= this.o.maxConnections) this.evictOldest();
    const open: Open = { version: e.version, client: Promise.resolve(undefined as never), lastUsed: Date.now(), inflight: new Set() };
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
    const transport = e.transport === 'sse' ? new SSEClientTransport(url, { fetch }) : new StreamableHTTPClientTransport(url, { fetch, reconnectionOptions: { maxReconnectionDelay: 30_000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 2 } });
    const client = new Client(GATEWAY_CLIENT_INFO, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.o.onToolsChanged(e.tenantId, e.name));
    client.onerror = (err) => this.o.logger.debug({ tenantId: e.tenantId, upstream: e.name, err: err.message }, 'upstream transport error');
    client.onclose = () => {
      const key = `${e.tenantId}|${e.name}`;
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
        for (const [k, v] of Object.entries(cred.headers)) headers.set(k, v);
        headers.set('user-agent', `${GATEWAY_CLIENT_INFO.name}/${GATEWAY_CLIENT_INFO.version}`);
        return this.o.fetch(url, { ...init, headers });
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
    const cause = (err as { cause?: unknown })?.cause;
    // the credential could not be used (the token endpoint refused it): its own reason, not the upstream's
    const auth = [err, cause].find((x) => x instanceof UpstreamAuthError);
    if (auth) return new UpstreamCallError('auth_failed', `upstream ${e.name}: ${(auth as Error).message}`);
    const egress = [err, cause].find((x) => x instanceof EgressRequestError || x instanceof EgressRefusedError);
    if (egress instanceof EgressRefusedError) return new UpstreamCallError('blocked', `upstream address refused by the egress rule: ${egress.reason}`);
    if (egress instanceof EgressRequestError) {
      if (egress.kind === 'too_large') return new UpstreamCallError('too_large', `the upstream's answer is larger than the cap of ${this.o.maxResultBytes} bytes`);
      if (egress.kind === 'timeout' || egress.kind === 'connect_timeout') return new UpstreamCallError('timeout', `upstream ${e.name} did not answer in time (${egress.kind})`);
      return new UpstreamCallError('unreachable', `upstream ${e.name} unreachable: ${egress.message}`);
    }
    if (err instanceof McpError) {
      if (err.code === ErrorCode.RequestTimeout) return new UpstreamCallError('timeout', `upstream ${e.name} did not answer within ${this.timeoutOf(e)} ms`);
      if (err.code === ErrorCode.ConnectionClosed) return new UpstreamCallError('unreachable', `upstream ${e.name} closed the connection`);
      // a JSON-RPC error the upstream answered with (unknown tool, invalid params, ...)
      return new UpstreamCallError('upstream_error', `upstream ${e.name} answered with an error: ${err.message}`.slice(0, 1000));
    }
    const message = err instanceof Error ? err.message : String(err);
    if (/\b401\b|unauthori[sz]ed/i.test(message)) return new UpstreamCallError('auth_failed', `upstream ${e.name} refused the credential (401)`);
    if (err instanceof SyntaxError || /JSON|parse|Unexpected content type|invalid_union|Invalid input|jsonrpc/i.test(message)) {
      return new UpstreamCallError('protocol_error', `upstream ${e.name} sent an answer that is not valid MCP: ${message}`.slice(0, 1000));
    }
    if (/ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|fetch failed|socket|network|Error POSTing|Error sending|HTTP [45]\d\d|Non-200/i.test(message)) {
      return new UpstreamCallError('unreachable', `upstream ${e.name} unreachable: ${message}`.slice(0, 1000));
    }
    return new UpstreamCallError('protocol_error', `upstream ${e.name}: ${message}`.slice(0, 1000));
  }

  private evictOldest(): void {
    let oldest: [string, Open] | undefined;
    for (const entry of this.open) if (!entry[1].inflight.size && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
    if (oldest) {
      const [tenantId, name] = oldest[0].split('|');
      this.drop(tenantId, name);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, open] of this.open) {
      if (!open.inflight.size && now - open.lastUsed > this.o.idleMs) {
        const [tenantId, name] = key.split('|');
        this.drop(tenantId, name);
      }
    }
  }
}
