/**
 * One HTTP(S) request to an address the policy checked: the connection goes to that address while the
 * URL's host name still drives SNI, certificate verification and the Host header; redirects are never
 * followed (a 3xx comes back as it is); DNS + TCP + TLS share one connect budget and the whole exchange
 * one deadline; the response body is capped. Node's http/https are used because `fetch` cannot pin the
 * address it connects to. Failures are `EgressRequestError`s with a kind each caller maps to its outcomes.
 */
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { SecureContext } from 'node:tls';
import type { ResolvedAddress } from './address-policy';

export interface PinnedRequest {
  url: URL;
  target: ResolvedAddress;
  method: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  /** the whole exchange, from the first byte sent to the last byte read */
  timeoutMs: number;
  /** TCP (+ TLS) connection; defaults to timeoutMs */
  connectTimeoutMs?: number;
  maxResponseBytes: number;
  /** past maxResponseBytes: fail (`too_large`), or stop reading and answer with what arrived */
  onTooLarge?: 'fail' | 'truncate';
  /** a response closed before its end fails (default); false when the status is all that counts */
  requireCompleteBody?: boolean;
  /** TLS trust (e.g. system roots plus an operator's CA); node's defaults when absent */
  secureContext?: SecureContext;
}

export interface PinnedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

export type EgressFailure = 'connect_timeout' | 'timeout' | 'too_large' | 'tls' | 'network' | 'error';

export class EgressRequestError extends Error {
  constructor(
    readonly kind: EgressFailure,
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'EgressRequestError';
  }
}

const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_TLS|ERR_SSL|HOSTNAME_MISMATCH|ERR_INVALID_CERT)/;

export function pinnedRequest(r: PinnedRequest): Promise<PinnedResponse> {
  const { url, target } = r;
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'https:';
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  return new Promise<PinnedResponse>((resolve, reject) => {
    let settled = false;
    let request: ClientRequest;
    const timers: NodeJS.Timeout[] = [];
    const fail = (e: EgressRequestError) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      reject(e);
      request?.destroy();
    };
    const options: https.RequestOptions & { secureContext?: SecureContext } = {
      host: target.address,
      family: target.family,
      port: url.port ? Number(url.port) : secure ? 443 : 80,
      path: `${url.pathname}${url.search}`,
      method: r.method,
      // SNI and certificate verification use the URL's host name, never the pinned address
      ...(secure ? { servername: isIP(hostname) ? undefined : hostname, ...(r.secureContext ? { secureContext: r.secureContext } : {}) } : {}),
      agent: false,
      headers: { ...r.headers, host: url.host, ...(body ? { 'content-length': String(body.length) } : {}) },
    };
    try {
      request = (secure ? https : http).request(options);
    } catch (e) {
      return fail(new EgressRequestError('error', `request not sent: ${(e as Error).message}`));
    }
    const connectMs = r.connectTimeoutMs ?? r.timeoutMs;
    const connectTimer = setTimeout(() => fail(new EgressRequestError('connect_timeout', `no ${secure ? 'TLS ' : ''}connection within ${connectMs} ms`)), connectMs);
    timers.push(connectTimer, setTimeout(() => fail(new EgressRequestError('timeout', `no complete answer within ${r.timeoutMs} ms`)), r.timeoutMs));
    request.on('socket', (socket) => socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer)));
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const end = () => {
        if (settled) return;
        settled = true;
        timers.forEach(clearTimeout);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), truncated });
      };
      res.on('data', (c: Buffer) => {
        if (truncated) return;
        size += c.length;
        if (size > r.maxResponseBytes) {
          if (r.onTooLarge === 'truncate') {
            truncated = true;
            res.destroy();
            return end();
          }
          return fail(new EgressRequestError('too_large', `response exceeds ${r.maxResponseBytes} bytes`));
        }
        chunks.push(c);
      });
      res.on('end', end);
      const cut = () => (res.complete || truncated || r.requireCompleteBody === false ? end() : fail(new EgressRequestError('network', 'the response was interrupted')));
      res.on('close', cut);
      res.on('error', cut);
    });
    request.on('error', (e: Error & { code?: string }) => {
      if (e.code && TLS_CODES.test(e.code)) return fail(new EgressRequestError('tls', `TLS: ${e.code}`, e.code));
      fail(new EgressRequestError('network', `request failed: ${e.code ?? e.message}`, e.code));
    });
    request.end(body);
  });
}
