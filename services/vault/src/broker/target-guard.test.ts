import { TargetGuard, TargetRejected, isNonPublicAddress } from './target-guard';

const resolver = (map: Record<string, string[]>) => async (host: string) => {
  if (!map[host]) throw new Error('ENOTFOUND');
  return map[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const T = '6f1c2e4a-1111-4a2b-9c3d-0123456789ab';
const OTHER = '9a7e0b3d-2222-4b2c-8d4e-ba9876543210';

describe('target-guard', () => {
  test('non-public addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '224.0.0.1']) {
      expect([a, isNonPublicAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect([a, isNonPublicAddress(a)]).toEqual([a, false]);
  });

  test('production: https only, public addresses only, no user info, no localhost', async () => {
    const g = new TargetGuard({ allowPrivate: false, requireHttps: true, resolve: resolver({ 'api.example.com': ['93.184.216.34'], 'evil.example.com': ['93.184.216.34', '10.0.0.5'] }) });
    await expect(g.check(T, 'https://api.example.com/v1')).resolves.toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(() => g.parse(T, 'http://api.example.com/v1')).toThrow(/https/);
    expect(() => g.parse(T, 'https://user:pw@api.example.com/')).toThrow(/credentials/);
    expect(() => g.parse(T, 'https://127.0.0.1/')).toThrow(/not public/);
    expect(() => g.parse(T, 'https://[::1]:8443/')).toThrow(/not public/);
    expect(() => g.parse(T, 'https://localhost/')).toThrow(/localhost/);
    expect(() => g.parse(T, 'file:///etc/passwd')).toThrow(TargetRejected);
    // a host with any private address is refused (DNS rebinding / split answers)
    await expect(g.check(T, 'https://evil.example.com/')).rejects.toThrow(/non-public/);
    await expect(g.check(T, 'https://missing.example.com/')).rejects.toThrow(/does not resolve/);
  });

  test('local profile: http and loopback allowed', async () => {
    const g = new TargetGuard({ allowPrivate: true, requireHttps: false });
    await expect(g.check(T, 'http://127.0.0.1:8080/x')).resolves.toMatchObject({ address: '127.0.0.1' });
  });

  test("a range granted to one tenant (UPSTREAM_ALLOW_CIDRS_BY_TENANT) is not open to another", async () => {
    const g = new TargetGuard({
      allowPrivate: false,
      requireHttps: true,
      allowCidrsByTenant: new Map([[T, ['10.20.0.0/16', '127.0.0.0/8']]]),
      resolve: resolver({ 'mcp.internal.example': ['10.20.1.5'], 'localhost': ['127.0.0.1'] }),
    });
    await expect(g.check(T, 'https://mcp.internal.example/v1')).resolves.toMatchObject({ address: '10.20.1.5' });
    await expect(g.check(T, 'https://10.20.3.4/v1')).resolves.toMatchObject({ address: '10.20.3.4' });
    await expect(g.check(T, 'https://localhost/v1')).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(g.check(OTHER, 'https://mcp.internal.example/v1')).rejects.toThrow(/non-public.*10\.20\.1\.5 is private/);
    expect(() => g.parse(OTHER, 'https://10.20.3.4/v1')).toThrow(/10\.20\.3\.4 is not public/);
    expect(() => g.parse(OTHER, 'https://localhost/v1')).toThrow(/localhost/);
    // outside its grant the tenant is refused like any other, and told so
    await expect(g.check(T, 'https://10.21.0.1/v1')).rejects.toThrow(/outside the ranges granted to this tenant/);
  });
});
