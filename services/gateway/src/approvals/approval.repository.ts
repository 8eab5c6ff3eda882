/** The only queries on the approvals table. Tenant id first, always. */
import type { Database, Db } from '@agw/shared';
import type { Selectable } from 'kysely';

/** A row of the approvals table, as its table type defines it. */
export type ApprovalRow = Selectable<Database['approvals']>;

const cols = [
  'action_id',
  'tenant_id',
  'agent_id',
  'agent_type',
  'agent_version',
  'tool',
  'method',
  'params',
  'opa_result',
  'queue_reason',
  'status',
  'queued_at',
  'decided_at',
  'decided_by',
  'note',
  'execution',
  'session_id',
] as const;

export class ApprovalRepository {
  constructor(private readonly db: Db) {}

  async enqueue(tenantId: string, a: Omit<ApprovalRow, 'tenant_id' | 'status' | 'decided_at' | 'decided_by' | 'note' | 'execution'>): Promise<void> {
    await this.db
      .insertInto('approvals')
      .values({
        ...a,
        tenant_id: tenantId,
        params: JSON.stringify(a.params),
        opa_result: JSON.stringify(a.opa_result),
        status: 'pending',
      })
      .execute();
  }

  listPending(tenantId: string, limit = 500): Promise<ApprovalRow[]> {
    return this.db
      .selectFrom('approvals')
      .select(cols)
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'pending')
      .orderBy('queued_at', 'asc')
      .limit(limit)
      .execute() as Promise<ApprovalRow[]>;
  }

  listDecided(tenantId: string, limit = 500): Promise<ApprovalRow[]> {
    return this.db
      .selectFrom('approvals')
      .select(cols)
      .where('tenant_id', '=', tenantId)
      .where('status', '!=', 'pending')
      .orderBy('decided_at', 'desc')
      .limit(limit)
      .execute() as Promise<ApprovalRow[]>;
  }

  get(tenantId: string, actionId: string): Promise<ApprovalRow | undefined> {
    return this.db.selectFrom('approvals').select(cols).where('tenant_id', '=', tenantId).where('action_id', '=', actionId).executeTakeFirst() as Promise<
      ApprovalRow | undefined
    >;
  }

  /** pending -> approved/rejected, only if still pending (the winner of a race decides). */
  async decide(tenantId: string, actionId: string, status: 'approved' | 'rejected', by: string, note: string | null): Promise<ApprovalRow | undefined> {
    return this.db
      .updateTable('approvals')
      .set({ status, decided_at: new Date(), decided_by: by, note })
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .where('status', '=', 'pending')
      .returning(cols)
      .executeTakeFirst() as Promise<ApprovalRow | undefined>;
  }

  async setExecution(tenantId: string, actionId: string, execution: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable('approvals')
      .set({ execution: JSON.stringify(execution) })
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .execute();
  }
}
