/**
 * The gateway's PiiGuard: asks the vault (gRPC) to detect personal data in a call's params and replace
 * it by per-subject HSM envelopes before anything is stored. If the vault cannot answer, the call fails
 * with a 502 (DependencyUnavailableError) and nothing is stored, never plaintext. Params in which the
 * vault's own detector (`@agw/pii`) finds nothing skip the round trip: the vault would return them as they are.
 */
import { mayContainPii } from '@agw/pii';
import { DependencyUnavailableError, isDependencyDown, jsonField, jsonOf, objectFromAnswerJson } from '@agw/shared';
import type { VaultClient } from '../clients/grpc-clients';
import type { PiiGuard, ProtectedParams } from '../pipeline/hooks';

export function createVaultPiiGuard(vault: VaultClient): PiiGuard {
  return {
    async protect(tenantId, actionId, params): Promise<ProtectedParams> {
      if (!mayContainPii(params)) return { piiDetected: false, storedParams: params, subjectIds: [] };
      let r;
      try {
        r = await vault.protectParams({ tenant_id: tenantId, action_id: actionId, ...jsonField('params', params) });
      } catch (e) {
        if (isDependencyDown(e)) {
          throw new DependencyUnavailableError('Vault service unreachable: personal data in params cannot be protected, so the call was refused', { cause: e });
        }
        throw e;
      }
      return { piiDetected: r.pii_detected, storedParams: objectFromAnswerJson(jsonOf(r, 'stored_params'), 'stored_params'), subjectIds: r.subject_ids };
    },
  };
}
