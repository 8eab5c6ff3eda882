/**
 * One HTTPS POST of a webhook body, the way the guard requires: the host is resolved and checked by the
 * TargetGuard, the connection goes to that very address (the URL's host name still drives SNI, certificate
 * verification and the Host header), redirects are never followed, and the whole attempt is bounded.
 * The request itself is the fleet's pinned client (`@agw/egress` pinnedRequest).
 */
import { EgressRequestError, caFileContext, pinnedRequest } from '@agw/egress';
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

export class HttpsSender {
  /** system roots plus the configured extra CA file, rebuilt when the file changes */
  private readonly secureContext: ReturnType<typeof caFileContext>;

  constructor(private readonly o: HttpsSenderOptions) {
    this.secureContext = caFileContext(o.caFile);
  }

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
    let target;
    try {
      target = await withTimeout(this.o.guard.resolve(url.hostname), this.o.connectTimeoutMs, 'DNS lookup timed out');
    } catch (e) {
      if (e instanceof TargetRefusedError) return done('refused', null, e.message);
      if (e instanceof AttemptTimeoutError) return done('timeout', null, e.message);
      return done('network_error', null, `DNS lookup failed: ${(e as { code?: string }).code ?? (e as Error).message}`);
    }
    const elapsed = performance.now() - t0;
    try {
      const res = await pinnedRequest({
        url,
        target,
        method: 'POST',
        // JSON unless the caller says otherwise (the SIEM export's JSON Lines)
        headers: { 'content-type': 'application/json', ...req.headers, 'user-agent': this.o.userAgent ?? 'agw-webhook/1.0' },
        body: req.body,
        // DNS + TCP + TLS share the connect budget; the whole attempt the timeout
        connectTimeoutMs: Math.max(this.o.connectTimeoutMs - elapsed, 1),
        timeoutMs: Math.max(this.o.timeoutMs - elapsed, 1),
        // the answer's status is what counts: a little of the body is read (and discarded), then the connection closes
        maxResponseBytes: MAX_RESPONSE_BYTES,
        onTooLarge: 'truncate',
        requireCompleteBody: false,
        secureContext: this.secureContext(),
      });
      const status = res.statusCode;
      if (status >= 200 && status < 300) return done('success', status, null);
      if (status >= 300 && status < 400) return done('http_error', status, `redirect to ${res.headers.location ? 'another location' : 'nowhere'} not followed`);
      return done('http_error', status, `receiver answered ${status}`);
    } catch (e) {
      if (!(e instanceof EgressRequestError)) return done('error', null, `request not sent: ${(e as Error).message}`);
      if (e.kind === 'connect_timeout') return done('timeout', null, `no TLS connection within ${this.o.connectTimeoutMs} ms`);
      if (e.kind === 'timeout') return done('timeout', null, `no complete answer within ${this.o.timeoutMs} ms`);
      if (e.kind === 'tls') return done('tls_error', null, e.message);
      if (e.kind === 'network') return done('network_error', null, e.code ?? e.message);
      return done('error', null, e.message);
    }
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
