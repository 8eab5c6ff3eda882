/**
 * Origin and Host validation of the MCP endpoints (docs/mcp.md, "Origin and Host"), as the MCP transport
 * spec requires against DNS rebinding: a browser page on another site must not reach the MCP server with
 * the user's network position.
 *
 * - A request without `Origin` passes (non-browser clients send none; browsers send it on every POST).
 * - An `Origin` passes when it is the gateway's own (PUBLIC_BASE_URL's origin), one of MCP_ALLOWED_ORIGINS,
 *   or, in the local profile only, a loopback origin (http(s)://localhost|127.0.0.1|[::1], any port).
 * - In the local profile, the `Host` must also be a loopback name, PUBLIC_BASE_URL's host or an allowed
 *   origin's host: a rebound name (`evil.example.com` resolving to 127.0.0.1) is refused even without an
 *   Origin. In production the gateway has a real name behind TLS, where a rebound name fails the
 *   certificate check.
 * A refusal is a 403 with a JSON-RPC error body, before authentication.
 */
import type { NextFunction, Request, Response } from 'express';

const LOOPBACK_HOST = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;

export interface OriginGuardOptions {
  publicBaseUrl: string;
  /** MCP_ALLOWED_ORIGINS: exact origins (scheme://host[:port]) */
  allowedOrigins: string[];
  local: boolean;
}

export function parseOrigins(spec: string): string[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const u = new URL(s);
      if (u.origin === 'null' || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) throw new Error(`MCP_ALLOWED_ORIGINS: "${s}" is not an origin (scheme://host[:port])`);
      return u.origin;
    });
}

/** Why this (Origin, Host) may not reach the MCP server, or null. */
export function originRefusal(o: OriginGuardOptions, origin: string | undefined, host: string | undefined): string | null {
  const own = new URL(o.publicBaseUrl);
  const allowed = new Set([own.origin, ...o.allowedOrigins]);
  if (origin !== undefined) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = null;
    }
    const ok = parsed !== null && (allowed.has(parsed.origin) || (o.local && LOOPBACK_HOST.test(parsed.host) && /^https?:$/.test(parsed.protocol)));
    if (!ok) return `Origin ${origin.slice(0, 200)} may not use this MCP server (allowed: the gateway's own origin and MCP_ALLOWED_ORIGINS)`;
  }
  if (o.local && host !== undefined) {
    const hosts = new Set([own.host.toLowerCase(), ...o.allowedOrigins.map((x) => new URL(x).host.toLowerCase())]);
    if (!LOOPBACK_HOST.test(host) && !hosts.has(host.toLowerCase())) return `Host ${host.slice(0, 200)} is not this MCP server's name (DNS rebinding protection)`;
  }
  return null;
}

export function mcpOriginGuard(o: OriginGuardOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path === '/mcp/server/health') return next();
    const why = originRefusal(o, req.get('origin'), req.get('host'));
    if (!why) return next();
    res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: ${why}` }, id: null });
  };
}
