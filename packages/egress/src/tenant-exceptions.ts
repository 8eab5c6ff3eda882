/**
 * Egress exceptions an operator grants per tenant: the address ranges one tenant's upstreams may reach
 * although they are not public (an MCP server or API on that tenant's own internal network). A range
 * granted to one tenant is never open to another: each tenant gets the AddressPolicy of its own ranges.
 *
 * Written as `<tenant id>=<cidr>[,<cidr>...]` entries separated by `;`, e.g.
 * `6f1c2e4a-…=10.20.0.0/16,fd00:20::/48;9a7e0b3d-…=192.168.7.10/32` (UPSTREAM_ALLOW_CIDRS_BY_TENANT).
 */
import { isIP } from 'node:net';
import { AddressPolicy, type LookupAll } from './address-policy';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `s` is a CIDR (`10.0.0.0/8`, `2001:db8::/32`) with a prefix length its family allows. */
export function isCidr(s: string): boolean {
  const [addr, bits, extra] = s.split('/');
  const family = isIP(addr);
  return family !== 0 && extra === undefined && bits !== undefined && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * Parses `<tenant id>=<cidr>[,<cidr>...]` entries separated by `;` (spaces around the separators are
 * ignored, an empty text is no exception). Throws an Error naming every entry that is not valid: a tenant
 * id is a UUID, each range a CIDR, and a tenant appears once.
 */
export function parseTenantCidrs(spec: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const problems: string[] = [];
  for (const entry of spec.split(';').map((e) => e.trim()).filter(Boolean)) {
    const eq = entry.indexOf('=');
    if (eq < 0) {
      problems.push(`"${entry}" is not <tenant id>=<cidr>[,<cidr>...]`);
      continue;
    }
    const tenant = entry.slice(0, eq).trim().toLowerCase();
    const cidrs = entry
      .slice(eq + 1)
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    if (!UUID.test(tenant)) problems.push(`"${entry.slice(0, eq).trim()}" is not a tenant id (a UUID)`);
    else if (out.has(tenant)) problems.push(`tenant ${tenant} appears twice`);
    if (!cidrs.length) problems.push(`tenant "${entry.slice(0, eq).trim()}" has no range`);
    const bad = cidrs.filter((c) => !isCidr(c));
    if (bad.length) problems.push(`${bad.map((b) => `"${b}"`).join(', ')} ${bad.length > 1 ? 'are not CIDRs' : 'is not a CIDR'} (address/prefix length)`);
    if (UUID.test(tenant) && !out.has(tenant)) out.set(tenant, cidrs);
  }
  if (problems.length) throw new Error(problems.join('; '));
  return out;
}

export interface TenantExceptionsOptions {
  /** ranges open to every tenant (the local profile's loopback; never an operator's grant in production) */
  allowCidrs?: readonly string[];
  /** every address open to every tenant (the local profile of brokered calls) */
  allowAll?: boolean;
  /** ranges granted per tenant, by tenant id */
  byTenant?: ReadonlyMap<string, readonly string[]>;
  lookup?: LookupAll;
}

/** The address policy of each tenant: the fleet's ranges, plus the ranges granted to that tenant alone. */
export class TenantAddressPolicies {
  private readonly shared: AddressPolicy;
  private readonly ranges = new Map<string, readonly string[]>();
  private readonly granted = new Map<string, AddressPolicy>();

  constructor(o: TenantExceptionsOptions = {}) {
    this.shared = new AddressPolicy({ allowCidrs: o.allowCidrs, allowAll: o.allowAll, lookup: o.lookup });
    for (const [tenantId, cidrs] of o.byTenant ?? []) {
      this.ranges.set(tenantId.toLowerCase(), [...cidrs]);
      this.granted.set(tenantId.toLowerCase(), new AddressPolicy({ allowCidrs: [...(o.allowCidrs ?? []), ...cidrs], allowAll: o.allowAll, lookup: o.lookup }));
    }
  }

  /** The policy `tenantId`'s outbound connections go through (one object per tenant with a grant, one shared by the rest). */
  of(tenantId: string): AddressPolicy {
    return this.granted.get(tenantId.toLowerCase()) ?? this.shared;
  }

  /** The ranges granted to `tenantId` alone (none for most tenants). */
  grantedTo(tenantId: string): readonly string[] {
    return this.ranges.get(tenantId.toLowerCase()) ?? [];
  }
}
