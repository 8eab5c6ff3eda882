/**
 * A tenant's single sign-on configuration (docs/auth.md, "Single sign-on (OIDC)"): what an owner or admin
 * sends to PUT /api/settings/sso, and the checks it passes before anything is stored. Pure: no I/O.
 *
 * - `issuer`: the OpenID provider's issuer identifier, exactly as its discovery document states it; https,
 *   or http on a loopback host only (a provider on the same machine, e.g. a local test IdP).
 * - `domains`: the e-mail domains whose verified addresses this provider may sign in (and create members
 *   for); a domain is bound to one tenant of the deployment.
 * - `default_role` and `group_roles`: the role of a member created at first sign-in; the owner role is
 *   never given by SSO (only an owner makes an owner).
 */
import { z } from 'zod';
import { ROLES, type Role } from '../tenants/roles';

export const SSO_ROLES = ROLES.filter((r): r is Exclude<Role, 'owner'> => r !== 'owner');
export type SsoRole = (typeof SSO_ROLES)[number];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const DOMAIN_RE = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Refusal of an issuer URL, or undefined when it is acceptable. */
export function issuerRefusal(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'issuer must be an absolute URL (the provider\'s issuer identifier, e.g. https://idp.example.com/realms/acme)';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.has(u.hostname))) return 'issuer must be an https URL (http is accepted on a loopback host only)';
  if (u.search || u.hash) return 'issuer must have no query or fragment';
  if (u.username || u.password) return 'issuer must carry no credentials';
  return undefined;
}

const role = z.enum(SSO_ROLES as [SsoRole, ...SsoRole[]], { error: `a role given by SSO is one of ${SSO_ROLES.join(', ')} (never owner: only an owner makes an owner)` });

export const ssoConfigBody = z
  .object({
    issuer: z
      .string()
      .max(2048)
      .superRefine((v, ctx) => {
        const why = issuerRefusal(v);
        if (why) ctx.addIssue({ code: 'custom', message: why });
      }),
    client_id: z.string().trim().min(1).max(512),
    client_secret: z.string().min(1).max(4096).optional().meta({ description: 'required the first time; omitted later: the stored one is kept. Stored sealed by the vault, never returned' }),
    domains: z
      .array(z.string().trim().toLowerCase().max(253).regex(DOMAIN_RE, 'each domain must be a DNS name such as example.com (no @, no scheme)'))
      .min(1, 'at least one e-mail domain is bound to the tenant')
      .max(50)
      .refine((d) => new Set(d).size === d.length, 'domains must not repeat'),
    default_role: role.default('viewer'),
    groups_claim: z.string().trim().min(1).max(128).nullable().optional().meta({ description: 'the id_token (or userinfo) claim listing the user\'s groups, e.g. groups' }),
    group_roles: z.record(z.string().min(1).max(256), role).default({}).meta({ description: 'group name -> role for members created at first sign-in; the most privileged match wins' }),
    require_sso: z.boolean().default(false).meta({ description: 'password (and GitHub) sign-in refused for every member of the tenant; the tenant API key stays the break-glass' }),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (Object.keys(v.group_roles).length && !v.groups_claim) ctx.addIssue({ code: 'custom', path: ['groups_claim'], message: 'group_roles needs groups_claim (the claim that lists the groups)' });
    if (Object.keys(v.group_roles).length > 100) ctx.addIssue({ code: 'custom', path: ['group_roles'], message: 'at most 100 group mappings' });
  })
  .meta({ id: 'SsoConfigInput', description: 'A tenant\'s OpenID Connect provider (docs/auth.md, "Single sign-on (OIDC)")' });

export type SsoConfigInput = z.infer<typeof ssoConfigBody>;

/** The role of a member created at first sign-in: the most privileged mapped group, else the default role. */
export function roleForGroups(cfg: { default_role: SsoRole; groups_claim: string | null; group_roles: Record<string, SsoRole> }, claims: Record<string, unknown>): SsoRole {
  if (!cfg.groups_claim) return cfg.default_role;
  const raw = claims[cfg.groups_claim];
  const groups = Array.isArray(raw) ? raw.filter((g): g is string => typeof g === 'string') : typeof raw === 'string' ? [raw] : [];
  const mapped = groups.map((g) => cfg.group_roles[g]).filter((r): r is SsoRole => r !== undefined);
  if (!mapped.length) return cfg.default_role;
  // ROLES is ordered from the most to the least privileged
  return mapped.sort((a, b) => ROLES.indexOf(a) - ROLES.indexOf(b))[0]!;
}

/** The domain of an e-mail address, lower-cased; undefined when it is not one. */
export function domainOf(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1) return undefined;
  return email.slice(at + 1).toLowerCase();
}

/**
 * What `GET /api/auth/sso/start?tenant=` names: an e-mail address (its domain), an e-mail domain, or a
 * tenant slug.
 */
export function parseTenantHint(hint: string): { domain: string; email?: string } | { slug: string } {
  const h = hint.trim().toLowerCase();
  if (h.includes('@')) {
    const domain = domainOf(h);
    return domain ? { domain, email: h } : { slug: h };
  }
  return h.includes('.') ? { domain: h } : { slug: h };
}
