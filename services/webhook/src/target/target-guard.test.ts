import { TargetGuard, TargetRefusedError } from './target-guard';

describe('target guard', () => {
  const guard = new TargetGuard();

  it.each([
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.10', 'private'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    // the hex spelling of a mapped address was taken for a public IPv6 address before @agw/egress
    ['::ffff:7f00:1', 'loopback'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(guard.refusalOf(ip)).toContain(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])('allows the public address %s', (ip) => {
    expect(guard.refusalOf(ip)).toBeNull();
  });

  it('allows configured ranges only', () => {
    const g = new TargetGuard(['127.0.0.0/8', '::1/128']);
    expect(g.refusalOf('127.0.0.1')).toBeNull();
    expect(g.refusalOf('::1')).toBeNull();
    expect(g.refusalOf('10.0.0.1')).toContain('private');
    expect(() => new TargetGuard(['nonsense/8'])).toThrow(/invalid CIDR/);
  });

  it('refuses a name when any address of its answer is internal, and pins the checked address', async () => {
    const answers: Record<string, Array<{ address: string; family: number }>> = {
      'public.test': [{ address: '93.184.215.14', family: 4 }],
      'mixed.test': [
        { address: '93.184.215.14', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
      'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    };
    const g = new TargetGuard([], async (h) => answers[h] ?? []);
    await expect(g.resolve('public.test')).resolves.toEqual({ address: '93.184.215.14', family: 4 });
    await expect(g.resolve('mixed.test')).rejects.toThrow(/10\.0\.0\.7 is private/);
    await expect(g.resolve('metadata.test')).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(g.resolve('nowhere.test')).rejects.toThrow(/did not resolve/);
    await expect(g.resolve('[::1]')).rejects.toThrow(/loopback/);
    await expect(g.resolve('192.168.0.1')).rejects.toThrow(/private/);
  });
});
