import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressPolicy, EgressRefusedError, nonPublicReason, pinnedLookup } from './address-policy';

describe('address policy', () => {
  it.each([
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.10', 'private'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['0:0:0:0:0:ffff:a00:1', 'private'],
    // IPv6 forms that carry an IPv4 target to a translator or a tunnel, and legacy ranges
    ['::7f00:1', 'IPv4-compatible'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::a9fe:a9fe', 'IPv4-compatible'],
    ['::ffff:0:7f00:1', 'IPv4-translated'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64'],
    ['2002:7f00:1::1', '6to4'],
    ['2002:a9fe:a9fe::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001::1', 'Teredo'],
    ['fec0::1', 'site-local'],
    ['feff::1', 'site-local'],
    // the rest of the IANA IPv6 special-purpose registry that is not globally reachable
    ['100:0:0:1::1', 'dummy prefix'],
    ['2001:2::1', 'benchmarking'],
    ['2001:1::1', 'IETF protocol assignments'],
    ['2001:1ff::1', 'IETF protocol assignments'],
    ['3fff::1', 'documentation'],
    ['3fff:fff::1', 'documentation'],
    ['5f00::1', 'segment routing'],
    ['200::1', 'outside global unicast'],
    ['4000::1', 'outside global unicast'],
    ['e000::1', 'outside global unicast'],
    ['192.88.99.1', '6to4 relay anycast'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(nonPublicReason(ip)).toContain(reason);
    expect(new AddressPolicy().refusalOf(ip)).toContain(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '2001:200::1', '2003::1', '2a00:1450:4001::200e', '3ffe:ffff::1', '2001:4860:4860::8888'])('allows the public address %s', (ip) => {
    expect(new AddressPolicy().refusalOf(ip)).toBeNull();
  });

  it('allows configured ranges only, or everything when told to', () => {
    const p = new AddressPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] });
    expect(p.refusalOf('127.0.0.1')).toBeNull();
    expect(p.refusalOf('::1')).toBeNull();
    expect(p.refusalOf('10.0.0.1')).toContain('private');
    expect(new AddressPolicy({ allowAll: true }).refusalOf('10.0.0.1')).toBeNull();
    expect(() => new AddressPolicy({ allowCidrs: ['nonsense/8'] })).toThrow(/invalid CIDR/);
  });

  it('an allowed IPv4 range does not open its IPv6 transition spellings', () => {
    const p = new AddressPolicy({ allowCidrs: ['127.0.0.0/8'] });
    expect(p.refusalOf('127.0.0.1')).toBeNull();
    expect(p.refusalOf('::ffff:127.0.0.1')).toBeNull(); // mapped: the same address
    for (const ip of ['::7f00:1', '::ffff:0:7f00:1', '64:ff9b::7f00:1', '64:ff9b:1::7f00:1', '2002:7f00:1::1']) expect(p.refusalOf(ip)).toMatch(/reserved/);
  });

  it('refuses a name when any address of its answer is internal; numeric IPv4 spellings are their address', async () => {
    const answers: Record<string, Array<{ address: string; family: number }>> = {
      'public.test': [{ address: '93.184.215.14', family: 4 }],
      'mixed.test': [
        { address: '93.184.215.14', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
      'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
    };
    const p = new AddressPolicy({ lookup: async (h) => answers[h] ?? [] });
    await expect(p.resolve('public.test')).resolves.toEqual({ address: '93.184.215.14', family: 4 });
    await expect(p.resolve('mixed.test')).rejects.toThrow(/10\.0\.0\.7 is private/);
    await expect(p.resolve('mapped.test')).rejects.toThrow(/loopback/);
    await expect(p.resolve('nowhere.test')).rejects.toBeInstanceOf(EgressRefusedError);
    await expect(p.resolve('[::1]')).rejects.toThrow(/loopback/);
    // a URL parser turns decimal, hex and short IPv4 forms into the dotted address before we see it
    for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://[::ffff:7f00:1]/']) {
      await expect(p.resolve(new URL(url).hostname)).rejects.toThrow(/loopback/);
    }
  });

  it('pins the connection to the checked address: a rebinding answer is never reached (local listeners prove it)', async () => {
    const hits: string[] = [];
    const listen = (host: string) =>
      new Promise<http.Server>((resolve) => {
        const s = http.createServer((_q, r) => {
          hits.push(host);
          r.end('ok');
        });
        s.listen(0, host, () => resolve(s));
      });
    const checked = await listen('127.0.0.2');
    const port = (checked.address() as AddressInfo).port;
    const rebound = await listen('127.0.0.3');
    await new Promise<void>((r) => rebound.close(() => r()));
    const other = await new Promise<http.Server>((resolve) => {
      const s = http.createServer((_q, r) => {
        hits.push('127.0.0.3');
        r.end('ok');
      });
      s.listen(port, '127.0.0.3', () => resolve(s));
    });
    let calls = 0;
    // the first answer is the one checked; every later answer points elsewhere
    const policy = new AddressPolicy({ allowCidrs: ['127.0.0.2/32', '127.0.0.3/32'], lookup: async () => [{ address: calls++ === 0 ? '127.0.0.2' : '127.0.0.3', family: 4 }] });
    const target = await policy.resolve('rebind.test');
    expect(target.address).toBe('127.0.0.2');
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(`http://rebind.test:${port}/`, { lookup: pinnedLookup(target), agent: false }, (res) => {
        let b = '';
        res.on('data', (c) => (b += c));
        res.on('end', () => resolve(b));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).toBe('ok');
    expect(hits).toEqual(['127.0.0.2']);
    checked.close();
    other.close();
  });
});
