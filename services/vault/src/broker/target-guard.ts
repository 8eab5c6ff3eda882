/**
 * Where brokered calls may go. A registered upstream must be an absolute http(s) URL without embedded
 * user info; outside the local profile only https. Unless private upstreams are allowed by config,
 * every address the host resolves to must be public (no loopback, private, link-local, CGNAT, ULA,
 * multicast or unspecified ranges, including IPv4-mapped IPv6), and the connection is pinned to the
 * address that was checked, so DNS rebinding cannot swap it between check and connect.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface TargetGuardOptions {
  allowPrivate: boolean;
  requireHttps: boolean;
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

export class TargetRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TargetRejected';
  }
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True for loopback, private, link-local, reserved and other non-public addresses. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class TargetGuard {
  private readonly resolve: NonNullable<TargetGuardOptions['resolve']>;

  constructor(private readonly o: TargetGuardOptions) {
    this.resolve = o.resolve ?? ((host) => lookup(host, { all: true, verbatim: true }));
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
    let addresses: Array<{ address: string; family: number }>;
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await this.resolve(host);
      } catch {
        throw new TargetRejected(`upstream host ${host} does not resolve`);
      }
    }
    if (!addresses.length) throw new TargetRejected(`upstream host ${host} does not resolve`);
    if (!this.o.allowPrivate) {
      const bad = addresses.find((a) => isNonPublicAddress(a.address));
      if (bad) throw new TargetRejected(`upstream host ${host} resolves to a non-public address`);
    }
    return { url, address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
  }
}
