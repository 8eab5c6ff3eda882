/** ParamsRevealer through the vault service's RevealParams (gRPC). */
import type { vault } from '@agw/proto';
import { type PromiseClient, jsonText, objectFromAnswerJsonText } from '@agw/shared';
import type { ParamsRevealer } from './params-revealer';

export function vaultRevealer(client: Pick<PromiseClient<typeof vault.VaultServiceService>, 'revealParams'>): ParamsRevealer {
  return {
    async reveal(tenantId, storedParams) {
      const res = await client.revealParams({ tenant_id: tenantId, params_json: jsonText(storedParams) });
      return { params: objectFromAnswerJsonText(res.params_json, 'params_json'), erasedSubjects: res.erased_subjects };
    },
  };
}
