import { TargetGuard, TargetRejected, isNonPublicAddress } from './target-guard';

const resolver = (map: Record<string, string[]>) => async (host: string) => {
  if (!map[host]) throw new Error('ENOTFOUND');
  return map[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('target-guard', () => {
  test('non-public addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '224.0.0.1']) {
      expect([a, isNonPublicAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect([a, isNonPublicAddress(a)]).toEqual([a, false]);
  });

  test('production: https only, public addresses only, no user info, no localhost', async () => {
    const g = new TargetGuard({ allowPrivate: false, requireHttps: true, resolve: resolver({ 'api.example.com': ['93.184.216.34'], 'evil.example.com': ['93.184.216.34', '10.0.0.5'] }) });
    await expect(g.check('https://api.example.com/v1')).resolves.toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(() => g.parse('http://api.example.com/v1')).toThrow(/https/);
    expect(() => g.parse('https://user:pw@api.example.com/')).toThrow(/credentials/);
    expect(() => g.parse('https://127.0.0.1/')).toThrow(/not public/);
    expect(() => g.parse('https://[::1]:8443/')).toThrow(/not public/);
    expect(() => g.parse('https://localhost/')).toThrow(/localhost/);
    expect(() => g.parse('file:///etc/passwd')).toThrow(TargetRejected);
    // a host with any private address is refused (DNS rebinding / split answers)
    await expect(g.check('https://evil.example.com/')).rejects.toThrow(/non-public/);
    await expect(g.check('https://missing.example.com/')).rejects.toThrow(/does not resolve/);
  });

  test('local profile: http and loopback allowed', async () => {
    const g = new TargetGuard({ allowPrivate: true, requireHttps: false });
    await expect(g.check('http://127.0.0.1:8080/x')).resolves.toMatchObject({ address: '127.0.0.1' });
  });
});
