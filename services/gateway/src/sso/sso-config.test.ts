import { domainOf, issuerRefusal, parseTenantHint, roleForGroups, ssoConfigBody } from './sso-config';

const valid = { issuer: 'https://idp.example.com/realms/acme', client_id: 'agw', client_secret: 's3cret', domains: ['Acme.example'] };

describe('SSO configuration validation', () => {
  it('accepts a minimal configuration: domains lower-cased, defaults filled', () => {
    const r = ssoConfigBody.parse(valid);
    expect(r).toEqual({ ...valid, domains: ['acme.example'], default_role: 'viewer', group_roles: {}, require_sso: false });
  });

  it.each([
    ['http://idp.example.com', /https URL \(http is accepted on a loopback host only\)/],
    ['ftp://idp.example.com', /https URL/],
    ['https://idp.example.com/?x=1', /no query or fragment/],
    ['https://user:pw@idp.example.com', /no credentials/],
    ['not a url', /absolute URL/],
  ])('refuses the issuer %s', (issuer, why) => {
    expect(issuerRefusal(issuer)).toMatch(why);
    const r = ssoConfigBody.safeParse({ ...valid, issuer });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(['issuer']);
  });

  it('accepts http on loopback only', () => {
    for (const issuer of ['http://127.0.0.1:15101', 'http://localhost:8080/idp', 'http://[::1]:9000']) expect(issuerRefusal(issuer)).toBeUndefined();
  });

  it('refuses the owner role, bad or repeated domains, group roles without a claim, unknown keys', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ default_role: 'owner' }, 'default_role'],
      [{ group_roles: { admins: 'owner' }, groups_claim: 'groups' }, 'group_roles'],
      [{ domains: ['user@acme.example'] }, 'domains'],
      [{ domains: ['https://acme.example'] }, 'domains'],
      [{ domains: [] }, 'domains'],
      [{ domains: ['acme.example', 'ACME.example'] }, 'domains'],
      [{ group_roles: { admins: 'admin' } }, 'groups_claim'],
      [{ client_secret_sealed: 'x' }, ''],
    ];
    for (const [over, path] of cases) {
      const r = ssoConfigBody.safeParse({ ...valid, ...over });
      expect(r.success).toBe(false);
      if (path) expect(r.error!.issues.map((i) => i.path[0])).toContain(path);
    }
  });

  it('the client secret is optional (kept when omitted)', () => {
    const { client_secret: _, ...rest } = valid;
    expect(ssoConfigBody.parse(rest).client_secret).toBeUndefined();
  });
});

describe('roles of members created at first sign-in', () => {
  const cfg = { default_role: 'viewer' as const, groups_claim: 'groups', group_roles: { ops: 'approver' as const, leads: 'admin' as const, audit: 'auditor' as const } };
  it('the most privileged mapped group wins; no match: the default role', () => {
    expect(roleForGroups(cfg, { groups: ['ops', 'leads'] })).toBe('admin');
    expect(roleForGroups(cfg, { groups: ['audit', 'ops'] })).toBe('approver');
    expect(roleForGroups(cfg, { groups: 'audit' })).toBe('auditor');
    expect(roleForGroups(cfg, { groups: ['other'] })).toBe('viewer');
    expect(roleForGroups(cfg, {})).toBe('viewer');
    expect(roleForGroups({ ...cfg, groups_claim: null }, { groups: ['leads'] })).toBe('viewer');
    expect(roleForGroups(cfg, { groups: [42, null, 'ops'] })).toBe('approver');
  });
});

describe('what a sign-in names', () => {
  it('an e-mail address (its domain), a domain, or a slug', () => {
    expect(parseTenantHint(' Alice@Acme.Example ')).toEqual({ domain: 'acme.example', email: 'alice@acme.example' });
    expect(parseTenantHint('acme.example')).toEqual({ domain: 'acme.example' });
    expect(parseTenantHint('acme-corp')).toEqual({ slug: 'acme-corp' });
    expect(domainOf('x@')).toBeUndefined();
    expect(domainOf('@x.y')).toBeUndefined();
  });
});
