/**
 * The public origins of the MCP server and its authorization server (PUBLIC_ORIGINS; docs/auth.md, "The host
 * that was asked"): the origins at which clients reach this gateway, PUBLIC_BASE_URL's first. The OAuth
 * discovery documents (RFC 9728, RFC 8414), the `WWW-Authenticate` challenge, the issuer (RFC 9207 `iss`)
 * and the token audience (RFC 8707 `resource`) are those of the origin the request came to when it is
 * listed, else PUBLIC_BASE_URL's. So a client configured with `http://localhost:8080/api/mcp/server` reads
 * metadata that names `localhost`, as RFC 9728 §3.3 requires it to check.
 *
 * One rule keeps the audience strict: a token is issued for the MCP server at one origin (the one its
 * client was sent to /authorize at) and is accepted at that origin only; the same server under another
 * listed name is another resource (a token obtained through `localhost` is refused at `127.0.0.1`).
 *
 * The API path (`/api`) is PUBLIC_BASE_URL's at every origin.
 */
import type { Request } from 'express';

/** The URLs of the MCP resource and its authorization server at one public origin. */
export interface OriginUrls {
  /** scheme://host[:port] */
  origin: string;
  /** the protected resource: origin + API path + /mcp/server */
  resource: string;
  /** the authorization server's issuer: origin + API path + /oauth */
  issuer: string;
  /** where the protected resource metadata is (the WWW-Authenticate challenge names it) */
  resourceMetadata: string;
}

/** Every public origin's URLs; the default's (PUBLIC_BASE_URL's) are also the object's own fields. */
export interface McpOauthUrls extends OriginUrls {
  /** every listed origin's URLs, the default first */
  all: readonly OriginUrls[];
  /** the URLs of the origin a request came to, when listed; else the default's */
  of(req: Pick<Request, 'protocol' | 'host'>): OriginUrls;
  /** the listed origin whose MCP resource this is (trailing slashes ignored), or undefined */
  byResource(resource: string): OriginUrls | undefined;
}

const LOOPBACK_TWIN: Record<string, string> = { '127.0.0.1': 'localhost', localhost: '127.0.0.1' };

/** Parses a comma-separated list of origins (scheme://host[:port]), or says what is wrong. */
export function parsePublicOrigins(spec: string): { origins: string[] } | { problem: string } {
  const origins: string[] = [];
  for (const s of spec.split(',').map((x) => x.trim()).filter(Boolean)) {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return { problem: `"${s}" is not a URL (expected an origin: scheme://host[:port])` };
    }
    if (!/^https?:$/.test(u.protocol) || u.origin === 'null' || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || u.username || u.password) {
      return { problem: `"${s}" is not an http(s) origin (scheme://host[:port], no path)` };
    }
    if (!origins.includes(u.origin)) origins.push(u.origin);
  }
  return { origins };
}

function urlsAt(origin: string, apiPath: string): OriginUrls {
  return { origin, resource: `${origin}${apiPath}/mcp/server`, issuer: `${origin}${apiPath}/oauth`, resourceMetadata: `${origin}/.well-known/oauth-protected-resource${apiPath}/mcp/server` };
}

const trimmed = (s: string) => s.replace(/\/+$/, '');

/**
 * The URLs of every public origin. `publicOrigins` is PUBLIC_ORIGINS (unset: PUBLIC_BASE_URL's origin, and in
 * the local profile its loopback twin too, `localhost` for `127.0.0.1` and back, same port);
 * PUBLIC_BASE_URL's origin is always listed, first.
 */
export function mcpOauthUrls(publicBaseUrl: string, publicOrigins?: readonly string[], local = false): McpOauthUrls {
  const base = new URL(trimmed(publicBaseUrl));
  const apiPath = trimmed(base.pathname);
  const origins = [base.origin];
  const twin = LOOPBACK_TWIN[base.hostname];
  const listed = publicOrigins ?? (local && twin ? [`${base.protocol}//${twin}${base.port ? `:${base.port}` : ''}`] : []);
  for (const o of listed) if (!origins.includes(o)) origins.push(o);
  const all = origins.map((o) => urlsAt(o, apiPath));
  const byOrigin = new Map(all.map((u) => [u.origin, u]));
  const byResource = new Map(all.map((u) => [u.resource, u]));
  const def = all[0];
  return {
    ...def,
    all,
    of(req) {
      const host = req.host;
      if (!host) return def;
      let origin: string;
      try {
        origin = new URL(`${req.protocol}://${host}`).origin;
      } catch {
        return def;
      }
      return byOrigin.get(origin) ?? def;
    },
    byResource: (resource) => byResource.get(trimmed(resource)),
  };
}
