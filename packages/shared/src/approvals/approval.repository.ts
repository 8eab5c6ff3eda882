/**
 * The only queries on the approvals table. Tenant id first, always (the expiry sweep is the one cross-tenant
 * query). The gateway queues and decides actions; the managed service queues a session's platform
 * confirmation requests through the same module (docs/managed.md, "Tools that ask a human").
 */
import { sql, type Selectable, type Transaction } from 'kysely';
import type { ApprovalBinding } from '../action-record';
import type { Database, Db } from '../db/database';

/**
 * The queue reason of a managed session's platform confirmation request (docs/managed.md, "Tools that ask
 * a human"): the platform runs the call once it hears `allow`, so approving it executes nothing here.
 */
export const PLATFORM_CONFIRMATION = 'platform_confirmation';

/** How long a queued action waits for a human when the tenant set no `approval_expiry_seconds`. */
export const DEFAULT_APPROVAL_EXPIRY_SECONDS = 24 * 3600;

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
  'params_sha256',
  'bundle_revision',
  'requested_by_key',
  'expires_at',
  'decision_binding',
  'retried_at',
  'platform_tool_use_id',
] as const;

export type NewApproval = Omit<ApprovalRow, 'tenant_id' | 'status' | 'decided_at' | 'decided_by' | 'note' | 'execution' | 'decision_binding' | 'retried_at' | 'platform_tool_use_id'> & {
  platform_tool_use_id?: string | null;
};

export class ApprovalRepository {
  constructor(private readonly db: Db) {}

  async enqueue(tenantId: string, a: NewApproval): Promise<void> {
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

  /** Take back a pending action whose record could not be appended (the caller was answered 5xx). */
  async withdraw(tenantId: string, actionId: string): Promise<void> {
    await this.db.deleteFrom('approvals').where('tenant_id', '=', tenantId).where('action_id', '=', actionId).where('status', '=', 'pending').execute();
  }

  /** Pending actions not expired at `now` (one the sweep has not reached yet is not shown). */
  listPending(tenantId: string, now: Date, limit = 500): Promise<ApprovalRow[]> {
    return this.db
      .selectFrom('approvals')
      .select(cols)
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
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

  /**
   * pending -> approved/rejected, only if still pending and not expired at `now` (the winner of a race
   * decides; the expiry sweep holds the row while it expires it). The binding is stored with the decision.
   */
  async decide(
    tenantId: string,
    actionId: string,
    status: 'approved' | 'rejected',
    by: string,
    note: string | null,
    now: Date,
    binding: (row: { params_sha256: string | null; bundle_revision: string | null }) => ApprovalBinding,
  ): Promise<ApprovalRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('approvals')
        .select(['params_sha256', 'bundle_revision'])
        .where('tenant_id', '=', tenantId)
        .where('action_id', '=', actionId)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .forUpdate()
        .executeTakeFirst();
      if (!row) return undefined;
      return (await trx
        .updateTable('approvals')
        .set({ status, decided_at: now, decided_by: by, note, decision_binding: JSON.stringify(binding(row)) })
        .where('tenant_id', '=', tenantId)
        .where('action_id', '=', actionId)
        .returning(cols)
        .executeTakeFirst()) as ApprovalRow | undefined;
    });
  }

  async setExecution(tenantId: string, actionId: string, execution: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable('approvals')
      .set({ execution: JSON.stringify(execution) })
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .execute();
  }

  /**
   * The expiry sweep: in one transaction holding the sweep's advisory lock (one replica sweeps at a time),
   * the pending actions due at `now` (oldest first, at most `limit`, locked), handed to `each`; the ones it
   * returns true for become `expired`. `only` restricts the sweep to one action of one tenant.
   */
  async expireDue(now: Date, limit: number, each: (row: ApprovalRow, trx: Transaction<Database>) => Promise<boolean>, only?: { tenantId: string; actionId: string }): Promise<ApprovalRow[]> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext('agw:approval-expiry'))`.execute(trx);
      let q = trx.selectFrom('approvals').select(cols).where('status', '=', 'pending').where('expires_at', '<=', now);
      if (only) q = q.where('tenant_id', '=', only.tenantId).where('action_id', '=', only.actionId);
      const due = (await q.orderBy('expires_at', 'asc').limit(limit).forUpdate().execute()) as ApprovalRow[];
      const expired: ApprovalRow[] = [];
      for (const row of due) {
        if (!(await each(row, trx))) break;
        await trx
          .updateTable('approvals')
          .set({ status: 'expired', decided_at: now, decided_by: 'system:expiry' })
          .where('tenant_id', '=', row.tenant_id)
          .where('action_id', '=', row.action_id)
          .execute();
        expired.push({ ...row, status: 'expired', decided_at: now, decided_by: 'system:expiry' });
      }
      return expired;
    });
  }

  /**
   * The agent's retry of an approved agent_direct action: claimed once, only by the same call (tool,
   * method, agent, params hash; never a platform confirmation, which only its session's call claims) and, when `requestedByKey` is given (an agent key), by the key that queued it.
   */
  claimRetry(
    tenantId: string,
    actionId: string,
    call: { tool: string; method: string; agent_id: string; params_sha256: string },
    requestedByKey: string | undefined,
    now: Date,
  ): Promise<ApprovalRow | undefined> {
    let q = this.db
      .updateTable('approvals')
      .set({ retried_at: now })
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .where('status', '=', 'approved')
      .where('queue_reason', '!=', PLATFORM_CONFIRMATION)
      .where('execution', 'is', null)
      .where('retried_at', 'is', null)
      .where('tool', '=', call.tool)
      .where('method', '=', call.method)
      .where('agent_id', '=', call.agent_id)
      .where('params_sha256', '=', call.params_sha256);
    if (requestedByKey) q = q.where('requested_by_key', '=', requestedByKey);
    return q.returning(cols).executeTakeFirst() as Promise<ApprovalRow | undefined>;
  }

  /**
   * The call a managed session's platform sends after a human approved its confirmation request
   * (queue_reason `platform_confirmation`): claimed once, only by the same session, tool, method and params
   * hash. Anything else finds nothing and is governed as a new call.
   */
  claimConfirmed(tenantId: string, sessionId: string, call: { tool: string; method: string; params_sha256: string }, now: Date): Promise<ApprovalRow | undefined> {
    return this.db
      .updateTable('approvals')
      .set({ retried_at: now })
      .where('action_id', '=', (eb) =>
        eb
          .selectFrom('approvals')
          .select('action_id')
          .where('tenant_id', '=', tenantId)
          .where('session_id', '=', sessionId)
          .where('queue_reason', '=', PLATFORM_CONFIRMATION)
          .where('status', '=', 'approved')
          .where('retried_at', 'is', null)
          .where('tool', '=', call.tool)
          .where('method', '=', call.method)
          .where('params_sha256', '=', call.params_sha256)
          .orderBy('decided_at', 'asc')
          .limit(1),
      )
      .where('tenant_id', '=', tenantId)
      .where('retried_at', 'is', null)
      .returning(cols)
      .executeTakeFirst() as Promise<ApprovalRow | undefined>;
  }

  /** Undo a claim whose record could not be appended. */
  async releaseRetry(tenantId: string, actionId: string): Promise<void> {
    await this.db.updateTable('approvals').set({ retried_at: null }).where('tenant_id', '=', tenantId).where('action_id', '=', actionId).execute();
  }
}
