/**
 * Where brokered calls may go. A registered upstream must be an absolute http(s) URL without embedded
 * user info; outside the local profile only https. Unless private upstreams are allowed by config, the
 * fleet's one address policy (`@agw/egress`) applies: every address the host resolves to must be public,
 * and the connection is pinned to the address that was checked (no DNS rebinding between check and connect).
 */
import { isIP } from 'node:net';
import { AddressPolicy, EgressRefusedError, type LookupAll, nonPublicReason } from '@agw/egress';

export interface TargetGuardOptions {
  allowPrivate: boolean;
  requireHttps: boolean;
  resolve?: LookupAll;
}

export class TargetRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TargetRejected';
  }
}

/** True for loopback, private, link-local, reserved and other non-public addresses (and non-addresses). */
export const isNonPublicAddress = (address: string): boolean => nonPublicReason(address) !== null;

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class TargetGuard {
  private readonly policy: AddressPolicy;

  constructor(private readonly o: TargetGuardOptions) {
    this.policy = new AddressPolicy({ allowAll: o.allowPrivate, lookup: o.resolve });
  }

  /** Syntax and scheme checks (at registration and before each call). */
  parse(text: string): URL {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new TargetRejected('upstream_url must be an absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRejected('upstream_url must use http or https');
    if (url.protocol === 'http:' && this.o.requireHttps) throw new TargetRejected('upstream_url must use https outside the local profile');
    if (url.username || url.password) throw new TargetRejected('upstream_url must not embed credentials (register them as the credential value)');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!this.o.allowPrivate && isIP(host) && isNonPublicAddress(host)) throw new TargetRejected(`upstream address ${host} is not public`);
    if (!this.o.allowPrivate && /^localhost$|\.localhost$/i.test(host)) throw new TargetRejected('upstream host localhost is not allowed');
    return url;
  }

  /** Resolve the host and check every address; returns the address to connect to. */
  async check(text: string): Promise<ResolvedTarget> {
    const url = this.parse(text);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      return { url, ...(await this.policy.resolve(host)) };
    } catch (e) {
      if (!(e instanceof EgressRefusedError)) throw e;
      throw new TargetRejected(/did not resolve/.test(e.reason) ? `upstream host ${host} does not resolve` : `upstream host ${host} resolves to a non-public address (${e.reason})`);
    }
  }
}
