/**
 * Tenant policies shared by the policy service's replicas: an activation on one replica is published as a
 * `policy` tenant change on core NATS (@agw/shared bus/tenant-changes.ts), and every replica drops that
 * tenant's cached bundle when it arrives (everything, when its connection comes back). The cache's TTL only
 * bounds a lost message, so a tenant with a few calls a minute is not evaluated cold on each of them.
 */
import { type Bus, type Logger, onTenantChange, publishTenantChange } from '@agw/shared';
import type { PolicyChangeRecorder } from '../changes/policy-change-recorder';
import type { TemplateCatalog } from '../templates/template-catalog';
import { TenantPolicies } from './tenant-policies';
import type { TenantPolicyRepository } from './tenant-policy.repository';

export function sharedTenantPolicies(
  repo: TenantPolicyRepository,
  catalog: TemplateCatalog,
  logger: Logger,
  bus: Pick<Bus, 'nc' | 'prefix'>,
  cacheMs: number,
  recorder?: PolicyChangeRecorder,
): TenantPolicies {
  const policies = new TenantPolicies(repo, catalog, logger, { cacheMs, recorder, onActivated: (tenantId) => publishTenantChange(bus, 'policy', tenantId) });
  onTenantChange(bus, 'policy', (tenantId) => policies.invalidate(tenantId));
  return policies;
}
