/**
 * What the gateway accepts of an MCP client's metadata, registered dynamically (RFC 7591) or described by
 * a Client ID Metadata Document (docs/auth.md, "MCP clients: OAuth 2.1", "Redirect URIs" and "Bounds"):
 * - a redirect URI is `https:`, `http:` on a loopback host (127.0.0.1, [::1], localhost; RFC 8252 §7.3), or
 *   an RFC 8252 §7.1 private-use scheme in reverse-DNS form (with a dot, e.g. `com.example.app:/cb`);
 *   `javascript:`, `data:`, `vbscript:`, `file:` (and `blob:`, `about:`) never; no fragment; 2048 characters at most;
 * - the metadata is 8 KB of JSON at most, `client_name` 100 characters, 10 redirect URIs, 5 contacts;
 *   `jwks`, `jwks_uri` and `software_statement` are dropped (public clients: no key is ever used).
 */
export const CLIENT_LIMITS = { metadataBytes: 8 * 1024, clientName: 100, redirectUris: 10, contacts: 5, uriLength: 2048 } as const;

const NEVER = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const PRIVATE_USE = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;
const DROPPED = ['jwks', 'jwks_uri', 'software_statement'] as const;

/** Why a redirect URI is refused, or undefined when it is acceptable. */
export function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !uri) return 'a redirect URI is a non-empty string';
  if (uri.length > CLIENT_LIMITS.uriLength) return `a redirect URI is at most ${CLIENT_LIMITS.uriLength} characters`;
  if (!URL.canParse(uri)) return `${JSON.stringify(uri.slice(0, 100))} is not a URL`;
  const u = new URL(uri);
  const scheme = u.protocol.toLowerCase();
  if (NEVER.has(scheme)) return `the ${scheme} scheme is never a redirect URI`;
  if (u.hash) return 'a redirect URI has no fragment';
  if (scheme === 'https:') return undefined;
  if (scheme === 'http:') return LOOPBACK.has(u.hostname.toLowerCase()) ? undefined : 'an http redirect URI must be on a loopback host (127.0.0.1, [::1], localhost); elsewhere https';
  if (PRIVATE_USE.test(scheme)) return undefined;
  return `the ${scheme} scheme is refused: use https, http on a loopback host, or a private-use scheme in reverse-DNS form (e.g. com.example.app:/callback)`;
}

/** The metadata as kept (the dropped fields removed), or why it is refused. */
export function boundClientMetadata<T extends Record<string, unknown>>(metadata: T): { metadata: T } | { problem: string } {
  const kept: Record<string, unknown> = { ...metadata };
  for (const k of DROPPED) delete kept[k];
  const name = kept.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.length > CLIENT_LIMITS.clientName)) return { problem: `client_name is a string of at most ${CLIENT_LIMITS.clientName} characters` };
  const uris = kept.redirect_uris;
  if (!Array.isArray(uris) || !uris.length) return { problem: 'redirect_uris is a non-empty list' };
  if (uris.length > CLIENT_LIMITS.redirectUris) return { problem: `at most ${CLIENT_LIMITS.redirectUris} redirect_uris` };
  for (const u of uris) {
    const p = redirectUriProblem(u);
    if (p) return { problem: p };
  }
  const contacts = kept.contacts;
  if (contacts !== undefined && (!Array.isArray(contacts) || contacts.length > CLIENT_LIMITS.contacts)) return { problem: `at most ${CLIENT_LIMITS.contacts} contacts` };
  if (Buffer.byteLength(JSON.stringify(kept)) > CLIENT_LIMITS.metadataBytes) return { problem: `the client metadata is at most ${CLIENT_LIMITS.metadataBytes} bytes of JSON` };
  return { metadata: kept as T };
}
