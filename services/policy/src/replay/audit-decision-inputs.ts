/** DecisionInputSource through the audit service's GetDecisionInputs (gRPC): the audit service owns the table. */
import type { PeerClient } from '@agw/shared';
import type { DecisionInputSource } from './replay.service';

export function auditDecisionInputs(client: Pick<PeerClient<'audit'>, 'getDecisionInputs'>): DecisionInputSource {
  return {
    async byActions(tenantId, actionIds) {
      if (!actionIds.length) return [];
      return (await client.getDecisionInputs({ tenant_id: tenantId, action_ids: actionIds })).inputs;
    },
  };
}
