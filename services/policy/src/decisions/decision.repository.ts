/** The only queries on policy_decisions. Tenant id first, always. */
import type { Database, Db } from '@agw/shared';
import type { Selectable } from 'kysely';

/** A row of policy_decisions, as its table type defines it. */
export type StoredDecision = Selectable<Database['policy_decisions']>;

const columns = [
  'tenant_id',
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
] as const;

export class DecisionRepository {
  constructor(private readonly db: Db) {}

  async insert(tenantId: string, d: Omit<StoredDecision, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('policy_decisions')
      .values({
        ...d,
        tenant_id: tenantId,
        stored_params: JSON.stringify(d.stored_params),
        behavioral: d.behavioral === null ? null : JSON.stringify(d.behavioral),
        violations: JSON.stringify(d.violations),
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'action_id']).doNothing())
      .execute();
  }

  async byActions(tenantId: string, actionIds: string[]): Promise<StoredDecision[]> {
    if (!actionIds.length) return [];
    return (await this.db.selectFrom('policy_decisions').select(columns).where('tenant_id', '=', tenantId).where('action_id', 'in', actionIds).execute()) as StoredDecision[];
  }
}
