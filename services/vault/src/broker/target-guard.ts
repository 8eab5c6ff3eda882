/**
 * Where brokered calls may go. A registered upstream must be an absolute http(s) URL without embedded
 * user info; outside the local profile only https. Unless private upstreams are allowed by config (the
 * local profile only), the fleet's one address policy (`@agw/egress`) applies: every address the host
 * resolves to must be public or inside a range an operator granted to this tenant
 * (UPSTREAM_ALLOW_CIDRS_BY_TENANT; another tenant's grant never counts), and the connection is pinned to
 * the address that was checked (no DNS rebinding between check and connect).
 */
import { isIP } from 'node:net';
import { EgressRefusedError, type LookupAll, TenantAddressPolicies, nonPublicReason } from '@agw/egress';
import { type HttpUrlBreach, httpUrlOf } from '../federation/upstream-url';

export interface TargetGuardOptions {
  /** every address for every tenant (the local profile) */
  allowPrivate: boolean;
  requireHttps: boolean;
  /** ranges granted per tenant besides public addresses */
  allowCidrsByTenant?: ReadonlyMap<string, readonly string[]>;
  resolve?: LookupAll;
}

export class TargetRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TargetRejected';
  }
}

/** How a registered upstream_url breaks the URL rules (`httpUrlOf`), in the broker's words. */
const BREACH: Record<HttpUrlBreach, string> = {
  not_absolute: 'upstream_url must be an absolute URL',
  not_http: 'upstream_url must use http or https',
  not_https: 'upstream_url must use https outside the local profile',
  credentials: 'upstream_url must not embed credentials (register them as the credential value)',
};

/** True for loopback, private, link-local, reserved and other non-public addresses (and non-addresses). */
export const isNonPublicAddress = (address: string): boolean => nonPublicReason(address) !== null;

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class TargetGuard {
  private readonly policies: TenantAddressPolicies;

  constructor(private readonly o: TargetGuardOptions) {
    this.policies = new TenantAddressPolicies({ allowAll: o.allowPrivate, byTenant: o.allowCidrsByTenant, lookup: o.resolve });
  }

  /** Syntax and scheme checks, and a literal address or `localhost` against the tenant's rule (at registration and before each call). */
  parse(tenantId: string, text: string): URL {
    const url = httpUrlOf(text, this.o.requireHttps);
    if (!(url instanceof URL)) throw new TargetRejected(BREACH[url]);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const policy = this.policies.of(tenantId);
    if (isIP(host) && policy.refusalOf(host)) throw new TargetRejected(`upstream address ${host} is not public${this.hint(tenantId)}`);
    if (/^localhost$|\.localhost$/i.test(host) && policy.refusalOf('127.0.0.1') && policy.refusalOf('::1')) throw new TargetRejected('upstream host localhost is not allowed');
    return url;
  }

  /** Resolve the host and check every address against the tenant's rule; returns the address to connect to. */
  async check(tenantId: string, text: string): Promise<ResolvedTarget> {
    const url = this.parse(tenantId, text);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      return { url, ...(await this.policies.of(tenantId).resolve(host)) };
    } catch (e) {
      if (!(e instanceof EgressRefusedError)) throw e;
      throw new TargetRejected(/did not resolve/.test(e.reason) ? `upstream host ${host} does not resolve` : `upstream host ${host} resolves to a non-public address (${e.reason})${this.hint(tenantId)}`);
    }
  }

  private hint(tenantId: string): string {
    return this.o.allowPrivate ? '' : this.policies.grantedTo(tenantId).length ? ' (outside the ranges granted to this tenant)' : '';
  }
}
