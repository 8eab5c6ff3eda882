/**
 * One HTTP(S) request to a tool's upstream, with the guard's pinned address, a timeout covering
 * connect and response, a response size cap, and no redirects (a 3xx comes back as it is).
 */
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup } from '@agw/egress';
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

export function sendUpstream(r: UpstreamRequest): Promise<UpstreamResponse> {
  const { url } = r.target;
  const pinned = pinnedLookup(r.target);
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: UpstreamError) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    const req = mod.request(
      url,
      {
        method: r.method,
        headers: { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) },
        lookup: pinned,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > r.maxBytes) {
            fail(new UpstreamError('too_large', `upstream response exceeds ${r.maxBytes} bytes`));
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ statusCode: res.statusCode ?? 502, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) });
        });
        res.on('error', () => fail(new UpstreamError('upstream_error', 'upstream response was interrupted')));
      },
    );
    const timer = setTimeout(() => {
      fail(new UpstreamError('timeout', `upstream did not answer within ${r.timeoutMs} ms`));
      req.destroy();
    }, r.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      fail(new UpstreamError('upstream_error', `upstream request failed: ${e.code ?? 'error'}`));
    });
    req.end(r.body);
  });
}
