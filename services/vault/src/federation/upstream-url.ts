/**
 * The URL rules of an upstream MCP endpoint or its token endpoint (docs/federation.md, "Egress"): an
 * absolute http(s) URL without user info (a credential is registered as the credential), https unless
 * UPSTREAM_REQUIRE_HTTPS is off (the local profile). Where it may connect is the egress rule's business
 * (`@agw/egress`: the tenant's AddressPolicy, public addresses plus the ranges granted to it,
 * UPSTREAM_ALLOW_CIDRS_BY_TENANT), checked at registration and on every request.
 */
import { type AddressPolicy, EgressRefusedError } from '@agw/egress';

/** The rule of `httpUrlOf` a URL's text breaks. */
export type HttpUrlBreach = 'not_absolute' | 'not_http' | 'not_https' | 'credentials';

/**
 * The URL of `text` under the rules every upstream URL keeps (a federated upstream's, its token endpoint's,
 * a brokered credential's upstream_url), or the one it breaks: absolute, http or https (https only when
 * `requireHttps`), no user info. Each caller words the breach for its field.
 */
export function httpUrlOf(text: string, requireHttps: boolean): URL | HttpUrlBreach {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not_absolute';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'not_http';
  if (url.protocol === 'http:' && requireHttps) return 'not_https';
  if (url.username || url.password) return 'credentials';
  return url;
}

const BREACH: Record<HttpUrlBreach, string> = {
  not_absolute: 'must be an absolute URL',
  not_http: 'must use http or https',
  not_https: 'must use https (UPSTREAM_REQUIRE_HTTPS)',
  credentials: 'must not embed credentials: register them as the credential',
};

export function parseUpstreamUrl(text: string, requireHttps: boolean): string {
  const url = httpUrlOf(text, requireHttps);
  if (!(url instanceof URL)) throw new Error(BREACH[url]);
  if (url.hash) throw new Error('must not have a fragment');
  return url.toString();
}

/** Throws with a readable reason when the URL's host may not be reached. */
export async function checkUpstreamAddress(policy: AddressPolicy, text: string): Promise<void> {
  const host = new URL(text).hostname;
  try {
    await policy.resolve(host);
  } catch (e) {
    if (!(e instanceof EgressRefusedError)) throw e;
    throw new Error(`host ${host} may not be reached: ${e.reason} (public addresses only, unless an operator grants this tenant a range: UPSTREAM_ALLOW_CIDRS_BY_TENANT)`);
  }
}
