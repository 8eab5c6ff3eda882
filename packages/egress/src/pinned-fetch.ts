/**
 * A WHATWG `fetch` under the fleet's egress rule, for clients that take one (the MCP SDK's transports):
 * every request resolves its host through the AddressPolicy and connects to the checked address (SNI,
 * certificate verification and the Host header keep the URL's name), redirects are never followed (a 3xx
 * comes back as it is), the connect and the wait for the response headers are bounded, and the response
 * body is streamed with a byte cap: past it the body stream fails with `EgressRequestError('too_large')`.
 * Streaming matters: an MCP server may answer a POST, or a GET, with a Server-Sent Events stream that stays
 * open, which a buffering client (pinnedRequest) cannot carry.
 *
 * Connections are kept alive per checked address (one pool per fetch), so a federated call does not pay a
 * TCP (+ TLS) handshake each time. No compression is asked for (the cap counts the bytes as they arrive).
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import type { SecureContext } from 'node:tls';
import type { AddressPolicy } from './address-policy';
import { EgressRequestError } from './pinned-request';

export interface PinnedFetchOptions {
  policy: AddressPolicy;
  /** the cap of one response body, in bytes; per method when a function (a GET may be a long stream) */
  maxResponseBytes: number | ((method: string) => number);
  /** DNS + TCP (+ TLS) */
  connectTimeoutMs: number;
  /** from the request sent to the response headers */
  headersTimeoutMs: number;
  /** TLS trust (e.g. system roots plus an operator's CA, `caFileContext`), read per request; node's defaults when absent */
  secureContext?: SecureContext | (() => SecureContext | undefined);
  /** sockets kept per address (default 64) */
  maxSocketsPerAddress?: number;
}

export type PinnedFetch = ((input: string | URL, init?: RequestInit) => Promise<Response>) & { close(): void };

const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_TLS|ERR_SSL|HOSTNAME_MISMATCH|ERR_INVALID_CERT)/;
const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export function createPinnedFetch(o: PinnedFetchOptions): PinnedFetch {
  const agentOptions = { keepAlive: true, maxSockets: o.maxSocketsPerAddress ?? 64, maxFreeSockets: 16, timeout: 60_000 };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
  const capOf = typeof o.maxResponseBytes === 'function' ? o.maxResponseBytes : () => o.maxResponseBytes as number;

  const pinnedFetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EgressRequestError('error', `unsupported scheme ${url.protocol}`);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const method = (init.method ?? 'GET').toUpperCase();
    const body = await bodyBytes(init.body);
    const target = await withTimeout(o.policy.resolve(url.hostname), o.connectTimeoutMs, () => new EgressRequestError('connect_timeout', `${url.hostname} did not resolve within ${o.connectTimeoutMs} ms`));
    signal?.throwIfAborted();
    const secure = url.protocol === 'https:';
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    headers.host = url.host;
    headers['accept-encoding'] = 'identity';
    if (body) headers['content-length'] = String(body.length);
    if (init.body instanceof URLSearchParams && !headers['content-type']) headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
    const cap = capOf(method);
    const context = typeof o.secureContext === 'function' ? o.secureContext() : o.secureContext;

    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      let request: http.ClientRequest;
      const timers: NodeJS.Timeout[] = [];
      const clear = () => timers.forEach(clearTimeout);
      const fail = (e: unknown) => {
        if (settled) return;
        settled = true;
        clear();
        signal?.removeEventListener('abort', onAbort);
        reject(e);
        request?.destroy();
      };
      const onAbort = () => fail(signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const options: https.RequestOptions = {
        host: target.address,
        family: target.family,
        port: url.port ? Number(url.port) : secure ? 443 : 80,
        path: `${url.pathname}${url.search}`,
        method,
        // SNI and certificate verification use the URL's host name, never the pinned address
        ...(secure ? { servername: isIP(hostname) ? undefined : hostname, ...(context ? { secureContext: context } : {}) } : {}),
        agent: secure ? httpsAgent : httpAgent,
        headers,
      };
      try {
        request = (secure ? https : http).request(options);
      } catch (e) {
        return fail(new EgressRequestError('error', `request not sent: ${(e as Error).message}`));
      }
      const connectTimer = setTimeout(() => fail(new EgressRequestError('connect_timeout', `no ${secure ? 'TLS ' : ''}connection within ${o.connectTimeoutMs} ms`)), o.connectTimeoutMs);
      timers.push(connectTimer, setTimeout(() => fail(new EgressRequestError('timeout', `no response headers within ${o.headersTimeoutMs} ms`)), o.headersTimeoutMs));
      request.on('socket', (socket: Socket) => {
        if (!socket.connecting) return clearTimeout(connectTimer); // a kept-alive socket
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      request.on('error', (e: Error & { code?: string }) => {
        if (e.code && TLS_CODES.test(e.code)) return fail(new EgressRequestError('tls', `TLS: ${e.code}`, e.code));
        fail(new EgressRequestError('network', `request failed: ${e.code ?? e.message}`, e.code));
      });
      request.on('response', (res) => {
        if (settled) return void res.destroy();
        settled = true;
        clear();
        const status = res.statusCode ?? 502;
        const responseHeaders = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (v === undefined) continue;
          for (const one of Array.isArray(v) ? v : [v]) responseHeaders.append(k, one);
        }
        const stream = NULL_BODY_STATUS.has(status) || method === 'HEAD' ? null : bodyStream(res, cap, signal, onAbort);
        if (!stream) {
          signal?.removeEventListener('abort', onAbort);
          res.resume();
        }
        try {
          resolve(new Response(stream, { status: status < 200 || status > 599 ? 502 : status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
        } catch (e) {
          res.destroy();
          reject(new EgressRequestError('error', `unusable response: ${(e as Error).message}`));
        }
      });
      request.end(body);
    });
  };
  return Object.assign(pinnedFetch, {
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  });
}

/** The response body as a web stream, failing past `cap` bytes or when the caller aborts. */
function bodyStream(res: http.IncomingMessage, cap: number, signal: AbortSignal | undefined, onAbort: () => void): ReadableStream<Uint8Array> {
  let size = 0;
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (e?: unknown) => {
        if (done) return;
        done = true;
        signal?.removeEventListener('abort', onAbort);
        signal?.removeEventListener('abort', aborted);
        if (e) {
          controller.error(e);
          res.destroy();
        } else controller.close();
      };
      const aborted = () => finish(signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'));
      signal?.removeEventListener('abort', onAbort);
      signal?.addEventListener('abort', aborted, { once: true });
      res.on('data', (chunk: Buffer) => {
        if (done) return;
        size += chunk.length;
        if (size > cap) return finish(new EgressRequestError('too_large', `response exceeds ${cap} bytes`));
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.on('end', () => finish());
      res.on('close', () => finish(res.complete ? undefined : new EgressRequestError('network', 'the response was interrupted')));
      res.on('error', (e) => finish(new EgressRequestError('network', `response failed: ${e.message}`)));
    },
    pull() {
      res.resume();
    },
    cancel() {
      done = true;
      res.destroy();
    },
  });
}

async function bodyBytes(body: RequestInit['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body).arrayBuffer());
}

function withTimeout<T>(p: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(error()), ms)))]).finally(() => clearTimeout(timer));
}
