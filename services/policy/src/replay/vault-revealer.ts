/** ParamsRevealer through the vault service's RevealParams (gRPC). */
import type { vault } from '@agw/proto';
import { type PromiseClient, jsonField, jsonOf, objectFromAnswerJson } from '@agw/shared';
import type { ParamsRevealer } from './params-revealer';

export function vaultRevealer(client: Pick<PromiseClient<typeof vault.VaultServiceService>, 'revealParams'>): ParamsRevealer {
  return {
    async reveal(tenantId, storedParams) {
      const res = await client.revealParams({ tenant_id: tenantId, ...jsonField('params', storedParams) });
      return { params: objectFromAnswerJson(jsonOf(res, 'params'), 'params'), erasedSubjects: res.erased_subjects };
    },
  };
}
