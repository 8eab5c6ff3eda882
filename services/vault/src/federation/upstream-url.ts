/**
 * The URL rules of an upstream MCP endpoint or its token endpoint (docs/federation.md, "Egress"): an
 * absolute http(s) URL without user info (a credential is registered as the credential), https unless
 * UPSTREAM_REQUIRE_HTTPS is off (the local profile). Where it may connect is the egress rule's business
 * (`@agw/egress`: the tenant's AddressPolicy, public addresses plus the ranges granted to it,
 * UPSTREAM_ALLOW_CIDRS_BY_TENANT), checked at registration and on every request.
 */
import { type AddressPolicy, EgressRefusedError } from '@agw/egress';

export function parseUpstreamUrl(text: string, requireHttps: boolean): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('must use http or https');
  if (url.protocol === 'http:' && requireHttps) throw new Error('must use https (UPSTREAM_REQUIRE_HTTPS)');
  if (url.username || url.password) throw new Error('must not embed credentials: register them as the credential');
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
