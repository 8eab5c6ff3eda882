/**
 * Which addresses the fleet may connect to on a tenant's behalf (webhook receivers, tool upstreams):
 * public ones only, unless an operator allowed a range. Refused: unspecified, private (RFC 1918, CGNAT,
 * IPv6 unique-local), loopback, link-local (which holds the cloud metadata address 169.254.169.254),
 * reserved, documentation, benchmarking, discard and multicast ranges, every range of the IANA IPv4 and
 * IPv6 special-purpose registries that is not globally reachable, and the IPv6 forms that carry an IPv4
 * target to a translator or tunnel (IPv4-compatible, IPv4-translated, NAT64 well-known and local-use,
 * 6to4, Teredo) together with deprecated site-local; IPv6 outside the global unicast space 2000::/3 is
 * refused as a whole. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) counts as its IPv4 address. A name is resolved once, every address of the answer
 * must pass, and the caller connects to the checked address (`pinnedLookup`), so DNS cannot change the
 * answer between the check and the connect (rebinding).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Ranges refused by default, each with the reason given to the user; the first match names the reason,
 * so a specific range comes before the wider one that holds it. Sources: the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and later), RFC 4291 (IPv4-compatible, 2000::/3),
 * RFC 2765 (IPv4-translated), RFC 3879 (site-local), RFC 7526 (6to4 relay anycast).
 */
const REFUSED: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'reserved (documentation)'],
  ['192.88.99.0', 24, 'ipv4', 'reserved (6to4 relay anycast)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'reserved (documentation)'],
  ['203.0.113.0', 24, 'ipv4', 'reserved (documentation)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'reserved (IPv4-compatible)'],
  ['::ffff:0:0:0', 96, 'ipv6', 'reserved (IPv4-translated)'],
  ['64:ff9b::', 96, 'ipv6', 'reserved (NAT64)'],
  ['64:ff9b:1::', 48, 'ipv6', 'reserved (local-use NAT64)'],
  ['100::', 64, 'ipv6', 'reserved (discard)'],
  ['100:0:0:1::', 64, 'ipv6', 'reserved (dummy prefix)'],
  ['2001::', 32, 'ipv6', 'reserved (Teredo)'],
  ['2001:2::', 48, 'ipv6', 'reserved (benchmarking)'],
  ['2001::', 23, 'ipv6', 'reserved (IETF protocol assignments)'],
  ['2001:db8::', 32, 'ipv6', 'reserved (documentation)'],
  ['2002::', 16, 'ipv6', 'reserved (6to4)'],
  ['3fff::', 20, 'ipv6', 'reserved (documentation)'],
  ['5f00::', 16, 'ipv6', 'reserved (segment routing)'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'reserved (site-local)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  // what is left outside the global unicast space (RFC 4291): unassigned, never a server's address
  ['::', 3, 'ipv6', 'reserved (outside global unicast 2000::/3)'],
  ['4000::', 2, 'ipv6', 'reserved (outside global unicast 2000::/3)'],
  ['8000::', 1, 'ipv6', 'reserved (outside global unicast 2000::/3)'],
];

const REFUSED_LISTS = REFUSED.map(([net, bits, type, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, bits, type);
  return { list, type, reason };
});

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** The connection was refused by the policy (or the name did not resolve); `reason` says why. */
export class EgressRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'EgressRefusedError';
  }
}

const familyOf = (ip: string): 'ipv4' | 'ipv6' => (isIP(ip) === 6 ? 'ipv6' : 'ipv4');

/**
 * An IPv4-mapped IPv6 address (::ffff:0:0/96) is its IPv4 address for every purpose here, however it is
 * spelled: `::ffff:10.0.0.1`, `::ffff:a00:1`, `0:0:0:0:0:ffff:a00:1`.
 */
export function unmapped(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  let s = ip.toLowerCase();
  const quad = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    const [a, b, c, d] = quad.slice(2).map(Number);
    s = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = s.split('::');
  const h = head ? head.split(':') : [];
  const r = rest === undefined ? null : rest ? rest.split(':') : [];
  const groups = r === null ? h : [...h, ...Array<string>(8 - h.length - r.length).fill('0'), ...r];
  if (groups.length !== 8) return ip;
  const n = groups.map((g) => parseInt(g || '0', 16));
  if (!n.slice(0, 5).every((x) => x === 0) || n[5] !== 0xffff) return ip;
  return `${n[6] >> 8}.${n[6] & 255}.${n[7] >> 8}.${n[7] & 255}`;
}

/** Why `ip` is not a public address (e.g. "address 10.0.0.1 is private"), or null when it is one. */
export function nonPublicReason(ip: string): string | null {
  const addr = unmapped(ip);
  if (!isIP(addr)) return `"${ip}" is not an IP address`;
  const fam = familyOf(addr);
  for (const { list, type, reason } of REFUSED_LISTS) {
    if (type === fam && list.check(addr, fam)) return `address ${addr} is ${reason}`;
  }
  return null;
}

export interface AddressPolicyOptions {
  /** ranges an operator allows although they are not public (e.g. loopback for local tests) */
  allowCidrs?: readonly string[];
  /** every address is allowed (the vault's local profile) */
  allowAll?: boolean;
  lookup?: LookupAll;
}

export class AddressPolicy {
  private readonly allowed = new BlockList();
  private readonly lookupAll: LookupAll;

  constructor(private readonly o: AddressPolicyOptions = {}) {
    for (const cidr of o.allowCidrs ?? []) {
      const [net, bits] = cidr.split('/');
      if (!isIP(net) || !Number.isInteger(Number(bits))) throw new Error(`invalid CIDR "${cidr}"`);
      this.allowed.addSubnet(net, Number(bits), familyOf(net));
    }
    this.lookupAll = o.lookup ?? systemLookup;
  }

  /** Why `ip` may not be contacted, or null. */
  refusalOf(ip: string): string | null {
    if (this.o.allowAll) return isIP(unmapped(ip)) ? null : `"${ip}" is not an IP address`;
    const addr = unmapped(ip);
    if (isIP(addr) && this.allowed.check(addr, familyOf(addr))) return null;
    return nonPublicReason(ip);
  }

  /**
   * Resolve `hostname` (an IP literal, bracketed or not, is taken as is) and return the address to connect
   * to; every address of the answer must be allowed, so a name that also resolves inside is refused.
   */
  async resolve(hostname: string): Promise<ResolvedAddress> {
    const host = hostname.replace(/^\[|\]$/g, '');
    let answers: Array<{ address: string; family: number }>;
    try {
      answers = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.lookupAll(host);
    } catch {
      throw new EgressRefusedError(`${host} did not resolve`);
    }
    if (!answers.length) throw new EgressRefusedError(`${host} did not resolve`);
    for (const a of answers) {
      const why = this.refusalOf(a.address);
      if (why) throw new EgressRefusedError(`target ${host} refused: ${why}`);
    }
    const address = unmapped(answers[0].address);
    return { address, family: isIP(address) === 6 ? 6 : 4 };
  }
}

/** A `lookup` for http(s).request that answers the checked address, whatever DNS says now. */
export function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return (_host, options, cb) => {
    if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else cb(null, target.address, target.family);
  };
}
