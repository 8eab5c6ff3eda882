/**
 * Guards webhook targets against server-side request forgery: the host is resolved here and every
 * resolved address must be public, unless an operator allowed its range (WEBHOOK_ALLOW_CIDRS; the local
 * profile allows loopback). The caller then connects to the returned address itself (pinned), so a DNS
 * answer that changes between check and connect (rebinding) cannot reach a refused address.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Ranges refused by default, with the reason given in the delivery log. */
const REFUSED: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'reserved (documentation)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'reserved (documentation)'],
  ['203.0.113.0', 24, 'ipv4', 'reserved (documentation)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b::', 96, 'ipv6', 'reserved (NAT64)'],
  ['100::', 64, 'ipv6', 'reserved (discard)'],
  ['2001:db8::', 32, 'ipv6', 'reserved (documentation)'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const REFUSED_LISTS = REFUSED.map(([net, bits, type, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, bits, type);
  return { list, type, reason };
});

/** The target may not be contacted; the attempt fails with outcome `refused`. */
export class TargetRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

function familyOf(ip: string): 'ipv4' | 'ipv6' {
  return isIP(ip) === 6 ? 'ipv6' : 'ipv4';
}

/** `::ffff:10.0.0.1` is 10.0.0.1 for every purpose here. */
function unmapped(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1] : ip;
}

export class TargetGuard {
  private readonly allowed = new BlockList();

  constructor(
    allowCidrs: readonly string[] = [],
    private readonly lookupAll: LookupAll = systemLookup,
  ) {
    for (const cidr of allowCidrs) {
      const [net, bits] = cidr.split('/');
      if (!isIP(net) || !Number.isInteger(Number(bits))) throw new Error(`invalid CIDR "${cidr}"`);
      this.allowed.addSubnet(net, Number(bits), familyOf(net));
    }
  }

  /** Why `ip` is refused, or null when it may be contacted. */
  refusalOf(ip: string): string | null {
    const addr = unmapped(ip);
    const fam = familyOf(addr);
    if (!isIP(addr)) return `"${ip}" is not an IP address`;
    if (this.allowed.check(addr, fam)) return null;
    for (const { list, type, reason } of REFUSED_LISTS) {
      if (type === fam && list.check(addr, fam)) return `address ${addr} is ${reason}`;
    }
    return null;
  }

  /**
   * Resolve `hostname` (an IP literal is taken as is) and return the address to connect to. Every address
   * of the answer must be allowed: a name that also resolves to an internal address is refused.
   */
  async resolve(hostname: string): Promise<ResolvedTarget> {
    const host = hostname.replace(/^\[|\]$/g, '');
    const answers = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.lookupAll(host);
    if (!answers.length) throw new TargetRefusedError(`${host} did not resolve`);
    for (const a of answers) {
      const why = this.refusalOf(a.address);
      if (why) throw new TargetRefusedError(`target ${host} refused: ${why}`);
    }
    const first = answers[0];
    return { address: unmapped(first.address), family: isIP(unmapped(first.address)) === 6 ? 6 : 4 };
  }
}

/**
 * Why a delivery to `url` would be refused right now, or null: for a settings-time pre-check. The check
 * that counts is still the one made when connecting (DNS can change in between).
 */
export async function refusalOfUrl(guard: TargetGuard, url: string): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'webhook_url must be an absolute URL';
  }
  if (u.protocol !== 'https:') return 'webhook_url must be an absolute HTTPS URL (http:// is rejected)';
  try {
    await guard.resolve(u.hostname);
    return null;
  } catch (e) {
    if (e instanceof TargetRefusedError) return e.message;
    const code = (e as { code?: string }).code;
    return code === 'ENOTFOUND' ? `webhook_url host ${u.hostname} does not resolve` : null;
  }
}
