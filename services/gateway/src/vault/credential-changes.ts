/**
 * The gateway's cache of "has this tool a credential?" (asked on every governed call; answered by the vault
 * otherwise) and its invalidation. Rule (docs/vault.md, "Credential cache"):
 *  - the replica that registers or deletes a credential drops the tenant's entries when the vault has
 *    answered, before it answers the client: its very next call sees the change;
 *  - it then publishes `changes.credentials.<tenant>` on core NATS; every other replica drops the tenant's
 *    entries when that arrives (normally within a millisecond), and at the latest after
 *    CREDENTIAL_CACHE_MS (a lost message; all entries are dropped when a replica's NATS connection comes back).
 * A stale "registered" is harmless (the vault finds no credential and the agent executes); a stale "none"
 * lasts at most CREDENTIAL_CACHE_MS on another replica.
 */
import { type Bus, TENANT_CACHE_MS, TenantCache, onTenantChange, publishTenantChange } from '@agw/shared';
import type { VaultClient } from '../clients/grpc-clients';

export const CREDENTIAL_CACHE_MS = TENANT_CACHE_MS;

export interface CredentialChanges {
  cache: TenantCache<boolean>;
  /** the vault client whose registerCredential / deleteCredential invalidate locally and tell the other replicas */
  vault: VaultClient;
}

export function credentialChanges(vault: VaultClient, bus: Pick<Bus, 'nc' | 'prefix'>, ttlMs = CREDENTIAL_CACHE_MS): CredentialChanges {
  const cache = new TenantCache<boolean>(ttlMs);
  onTenantChange(bus, 'credentials', (tenantId) => cache.invalidate(tenantId));
  const changed = (tenantId: string) => {
    cache.invalidate(tenantId);
    publishTenantChange(bus, 'credentials', tenantId);
  };
  return {
    cache,
    vault: {
      ...vault,
      // also on failure: a deadline can pass after the vault committed
      registerCredential: (req, o) => vault.registerCredential(req, o).finally(() => changed(req.tenant_id)),
      deleteCredential: (req, o) => vault.deleteCredential(req, o).finally(() => changed(req.tenant_id)),
    },
  };
}
