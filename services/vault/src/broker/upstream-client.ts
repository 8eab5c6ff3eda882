/**
 * One HTTP(S) request to a tool's upstream through the fleet's pinned client (`@agw/egress`): the guard's
 * checked address, one timeout covering connect and response, a response size cap, no redirects (a 3xx
 * comes back as it is); failures become the broker's UpstreamError outcomes.
 */
import { EgressRequestError, pinnedRequest } from '@agw/egress';
import type { ResolvedTarget } from './target-guard';

export interface UpstreamRequest {
  target: ResolvedTarget;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  timeoutMs: number;
  maxBytes: number;
}

export interface UpstreamResponse {
  statusCode: number;
  contentType: string;
  body: Buffer;
}

export class UpstreamError extends Error {
  constructor(
    readonly outcome: 'timeout' | 'too_large' | 'upstream_error',
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export async function sendUpstream(r: UpstreamRequest): Promise<UpstreamResponse> {
  try {
    const res = await pinnedRequest({ url: r.target.url, target: r.target, method: r.method, headers: r.headers, body: r.body, timeoutMs: r.timeoutMs, maxResponseBytes: r.maxBytes });
    return { statusCode: res.statusCode || 502, contentType: String(res.headers['content-type'] ?? ''), body: res.body };
  } catch (e) {
    if (!(e instanceof EgressRequestError)) throw e;
    if (e.kind === 'timeout' || e.kind === 'connect_timeout') throw new UpstreamError('timeout', `upstream did not answer within ${r.timeoutMs} ms`);
    if (e.kind === 'too_large') throw new UpstreamError('too_large', `upstream response exceeds ${r.maxBytes} bytes`);
    if (e.message === 'the response was interrupted') throw new UpstreamError('upstream_error', 'upstream response was interrupted');
    throw new UpstreamError('upstream_error', `upstream request failed: ${e.code ?? 'error'}`);
  }
}
