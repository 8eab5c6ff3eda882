/** ParamsRevealer through the vault service's RevealParams (gRPC). */
import type { vault } from '@agw/proto';
import type { PromiseClient } from '@agw/shared';
import type { ParamsRevealer } from './params-revealer';

export function vaultRevealer(client: Pick<PromiseClient<typeof vault.VaultServiceService>, 'revealParams'>): ParamsRevealer {
  return {
    async reveal(tenantId, storedParams) {
      const res = await client.revealParams({ tenantId, paramsJson: JSON.stringify(storedParams) });
      return { params: JSON.parse(res.paramsJson || '{}') as Record<string, unknown>, erasedSubjects: res.erasedSubjects };
    },
  };
}
