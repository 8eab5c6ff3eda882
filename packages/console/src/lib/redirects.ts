/**
 * Where the consent page may send the browser after a decision (docs/console.md, "OAuth consent"): the
 * same rule the authorization server applies to a client's redirect URIs (docs/auth.md): `https:`, `http:`
 * (the server allows it on loopback only) or an RFC 8252 private-use scheme, which is a reverse domain name
 * (`com.example.app:`). Anything else (`javascript:`, `data:`, `vbscript:`, `file:`, a bare word scheme) is
 * shown as text, never navigated to: the page's CSP is the second line, not the only one.
 */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

export function navigableRedirect(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const scheme = parsed.protocol.toLowerCase();
  return scheme === 'https:' || scheme === 'http:' || PRIVATE_USE_SCHEME.test(scheme) ? parsed.href : null;
}

/** The host of the client_id when it is a URL (a Client ID Metadata Document), else null. */
export function clientIdHost(clientId: string): string | null {
  try {
    const u = new URL(clientId);
    return u.protocol === 'https:' ? u.host : null;
  } catch {
    return null;
  }
}
