/**
 * The only reads of `audit_decision_inputs`: the replay inputs committed with the records
 * (`audit_append_batch` writes them in the record's transaction). Tenant id first, always.
 */
import type { Db, DecisionInputRow } from '@agw/shared';

/** most ids per look-up (the policy service's replay takes at most 1000 actions) */
export const MAX_DECISION_INPUTS = 1000;

/** action ids are UUIDs: any other id has no input (and must not reach a uuid comparison) */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class DecisionInputRepository {
  constructor(private readonly db: Db) {}

  async byActions(tenantId: string, actionIds: readonly string[]): Promise<DecisionInputRow[]> {
    const ids = actionIds.filter((id) => UUID.test(id));
    if (!ids.length || !UUID.test(tenantId)) return [];
    return this.db
      .selectFrom('audit_decision_inputs')
      .select([
        'action_id',
        'agent_id',
        'agent_type',
        'agent_version',
        'tool',
        'method',
        'session_id',
        'stored_params',
        'pii_detected',
        'behavioral',
        'decision',
        'violations',
        'severity',
        'bundle_revision',
        'passes',
        'evaluated_at',
      ])
      .where('tenant_id', '=', tenantId)
      .where('action_id', 'in', ids)
      .execute();
  }
}
