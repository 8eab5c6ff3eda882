import { TenantAddressPolicies, isCidr, parseTenantCidrs } from './tenant-exceptions';

const A = '6f1c2e4a-1111-4a2b-9c3d-0123456789ab';
const B = '9a7e0b3d-2222-4b2c-8d4e-ba9876543210';

describe('per-tenant egress exceptions', () => {
  it('parses <tenant>=<cidr>,<cidr>;… with spaces, case-insensitive tenant ids', () => {
    expect(parseTenantCidrs('')).toEqual(new Map());
    expect(parseTenantCidrs(` ${A.toUpperCase()} = 10.20.0.0/16 , fd00:20::/48 ; ${B}=192.168.7.10/32 ;`)).toEqual(
      new Map([
        [A, ['10.20.0.0/16', 'fd00:20::/48']],
        [B, ['192.168.7.10/32']],
      ]),
    );
  });

  it.each([
    ['10.0.0.0/8', /is not <tenant id>=<cidr>/],
    ['acme=10.0.0.0/8', /"acme" is not a tenant id/],
    [`${A}=`, /has no range/],
    [`${A}=10.0.0.0`, /"10.0.0.0" is not a CIDR/],
    [`${A}=10.0.0.0/33,ten/8`, /"10.0.0.0\/33", "ten\/8" are not CIDRs/],
    [`${A}=10.0.0.0/8;${A}=10.1.0.0/16`, /appears twice/],
  ])('refuses %s, saying why', (spec, why) => {
    expect(() => parseTenantCidrs(spec)).toThrow(why);
  });

  it('isCidr wants an address and a prefix length its family allows', () => {
    expect(['10.0.0.0/8', '::1/128', '2001:db8::/32', '0.0.0.0/0'].every(isCidr)).toBe(true);
    expect(['10.0.0.0', '10.0.0.0/33', '::/129', 'x/8', '10.0.0.0/8/8', '10.0.0.0/-1'].some(isCidr)).toBe(false);
  });

  it("tenant A's exception does not open the range to tenant B", async () => {
    const lookup = async () => [{ address: '10.20.1.5', family: 4 }];
    const p = new TenantAddressPolicies({ byTenant: new Map([[A, ['10.20.0.0/16']]]), lookup });
    expect(p.of(A).refusalOf('10.20.1.5')).toBeNull();
    expect(p.of(A.toUpperCase()).refusalOf('10.20.1.5')).toBeNull();
    expect(p.of(A).refusalOf('10.21.0.1')).toMatch(/private/);
    expect(p.of(B).refusalOf('10.20.1.5')).toMatch(/private/);
    await expect(p.of(A).resolve('internal.example')).resolves.toEqual({ address: '10.20.1.5', family: 4 });
    await expect(p.of(B).resolve('internal.example')).rejects.toThrow(/10\.20\.1\.5 is private/);
    expect(p.grantedTo(A)).toEqual(['10.20.0.0/16']);
    expect(p.grantedTo(B)).toEqual([]);
  });

  it('the fleet-wide ranges (the local profile) stay open to every tenant beside the grants', () => {
    const p = new TenantAddressPolicies({ allowCidrs: ['127.0.0.0/8'], byTenant: new Map([[A, ['10.20.0.0/16']]]) });
    expect(p.of(A).refusalOf('127.0.0.1')).toBeNull();
    expect(p.of(B).refusalOf('127.0.0.1')).toBeNull();
    expect(p.of(B).refusalOf('10.20.0.1')).toMatch(/private/);
    // a grant never opens the IPv6 spellings of an IPv4 target
    expect(p.of(A).refusalOf('::ffff:0:a14:1')).toMatch(/IPv4-translated/);
  });
});
