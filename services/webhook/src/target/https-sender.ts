/**
 * One HTTPS POST of a webhook body, the way the guard requires: the host is resolved and checked by the
 * TargetGuard, the connection goes to that very address (the URL's host name still drives SNI, certificate
 * verification and the Host header), redirects are never followed, and the whole attempt is bounded.
 * Node's https module is used because `fetch` cannot pin the address it connects to.
 */
import { readFileSync, statSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { type ConnectionOptions, type SecureContext, createSecureContext, rootCertificates } from 'node:tls';
import { type TargetGuard, TargetRefusedError } from './target-guard';

export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'tls_error' | 'refused' | 'error';

export interface SendResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  /** short, safe description of a failure (never the body or a header value) */
  error: string | null;
  startedAt: Date;
  durationMs: number;
}

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface HttpsSenderOptions {
  guard: TargetGuard;
  timeoutMs: number;
  connectTimeoutMs: number;
  /** PEM file of extra trusted CAs, re-read when its modification time changes */
  caFile?: string;
  userAgent?: string;
}

/** How many bytes of a response are read (and discarded) before the connection is closed. */
const MAX_RESPONSE_BYTES = 64 * 1024;

const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_TLS|ERR_SSL|HOSTNAME_MISMATCH|ERR_INVALID_CERT)/;

export class HttpsSender {
  private ca?: { mtimeMs: number; context: SecureContext };

  constructor(private readonly o: HttpsSenderOptions) {}

  async send(req: SendRequest): Promise<SendResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const done = (outcome: AttemptOutcome, statusCode: number | null, error: string | null): SendResult => ({
      outcome,
      statusCode,
      error,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
    });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return done('refused', null, 'webhook_url is not a valid URL');
    }
    if (url.protocol !== 'https:') return done('refused', null, 'webhook_url must use https');
    const deadline = AbortSignal.timeout(this.o.timeoutMs);
    let target;
    try {
      target = await withTimeout(this.o.guard.resolve(url.hostname), this.o.connectTimeoutMs, 'DNS lookup timed out');
    } catch (e) {
      if (e instanceof TargetRefusedError) return done('refused', null, e.message);
      if (e instanceof AttemptTimeoutError) return done('timeout', null, e.message);
      return done('network_error', null, `DNS lookup failed: ${(e as { code?: string }).code ?? (e as Error).message}`);
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const finish = (r: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        resolve(r);
      };
      let request: ClientRequest;
      try {
        const options: https.RequestOptions & Pick<ConnectionOptions, 'secureContext'> = {
          host: target.address,
          family: target.family,
          port: url.port ? Number(url.port) : 443,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          // SNI and certificate verification use the URL's host name, never the pinned address
          servername: isIP(hostname) ? undefined : hostname,
          secureContext: this.secureContext(),
          agent: false,
          signal: deadline,
          headers: {
            ...req.headers,
            host: url.host,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(req.body)),
            'user-agent': this.o.userAgent ?? 'agw-webhook/1.0',
          },
        };
        // secureContext is handed through to tls.connect like the other TLS options
        request = https.request(options);
      } catch (e) {
        return finish(done('error', null, `request not sent: ${(e as Error).message}`));
      }
      // DNS + TCP + TLS share one budget
      connectTimer = setTimeout(
        () => request.destroy(new AttemptTimeoutError(`no TLS connection within ${this.o.connectTimeoutMs} ms`)),
        Math.max(this.o.connectTimeoutMs - (performance.now() - t0), 0),
      );
      request.on('socket', (socket) => {
        socket.once('secureConnect', () => clearTimeout(connectTimer));
      });
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const end = () => {
          if (status >= 200 && status < 300) finish(done('success', status, null));
          else if (status >= 300 && status < 400) finish(done('http_error', status, `redirect to ${res.headers.location ? 'another location' : 'nowhere'} not followed`));
          else finish(done('http_error', status, `receiver answered ${status}`));
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      });
      request.on('error', (e: Error & { code?: string }) => {
        if (e instanceof AttemptTimeoutError) return finish(done('timeout', null, e.message));
        if (e.name === 'AbortError' || e.name === 'TimeoutError' || deadline.aborted) return finish(done('timeout', null, `no complete answer within ${this.o.timeoutMs} ms`));
        if (e.code && TLS_CODES.test(e.code)) return finish(done('tls_error', null, `TLS: ${e.code}`));
        finish(done('network_error', null, e.code ?? e.message));
      });
      request.end(req.body);
    });
  }

  /**
   * System roots plus the configured extra CA file, as one TLS context built when the file changed
   * (a missing file means no extra CA yet); undefined means node's defaults.
   */
  private secureContext(): SecureContext | undefined {
    if (!this.o.caFile) return undefined;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.o.caFile).mtimeMs;
    } catch {
      this.ca = undefined;
      return undefined;
    }
    if (!this.ca || this.ca.mtimeMs !== mtimeMs) {
      this.ca = { mtimeMs, context: createSecureContext({ ca: [...rootCertificates, readFileSync(this.o.caFile, 'utf8')] }) };
    }
    return this.ca.context;
  }
}

class AttemptTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttemptTimeoutError';
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new AttemptTimeoutError(message)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
