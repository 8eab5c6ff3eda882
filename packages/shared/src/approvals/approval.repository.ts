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
/** Why an action waits in the queue (approvals.queue_reason). */
export const QUEUE_REASONS = ['policy', 'fail_to_queue', 'session_config', PLATFORM_CONFIRMATION] as const;
export type QueueReason = (typeof QUEUE_REASONS)[number];
/** The most pending actions one list answers (the oldest first). */
export const PENDING_LIST_LIMIT = 500;
/** What a list of pending actions keeps: one kind of queued action, or one action. */
export interface PendingFilter {
  queueReason?: string;
  actionId?: string;
}

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
  'required_approvers',
  'initiator_user_id',
  'acts_for_user_id',
] as const;

export type NewApproval = Omit<
  ApprovalRow,
  'tenant_id' | 'status' | 'decided_at' | 'decided_by' | 'note' | 'execution' | 'decision_binding' | 'retried_at' | 'platform_tool_use_id' | 'required_approvers' | 'initiator_user_id' | 'acts_for_user_id'
> & {
  platform_tool_use_id?: string | null;
  /** the policy's number of distinct approvers; the tenant's setting `required_approvers` applies when stricter */
  required_approvers?: number;
  initiator_user_id?: string | null;
  /** the human the call acted for: an approved call of a per_user upstream runs with their connection */
  acts_for_user_id?: string | null;
};

/** The most approvers an action can require (the column's check). */
export const MAX_REQUIRED_APPROVERS = 10;

/** One member's approval of a four-eyes action. */
export interface ApprovalVote {
  member_id: string;
  member_email: string;
  note: string | null;
  voted_at: Date;
}

/**
 * What one approval vote did: `pending` (recorded, the quorum not met yet), `approved` (recorded and the
 * quorum met: the action is approved now, by this vote), `duplicate` (this member had approved already).
 */
export type VoteOutcome = { kind: 'pending' | 'approved' | 'duplicate'; row: ApprovalRow; votes: ApprovalVote[] };

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
        // the stricter of the caller's (policy's) number and the tenant's setting (docs/auth.md, "Four-eyes approvals")
        required_approvers: sql<number>`LEAST(${MAX_REQUIRED_APPROVERS}, GREATEST(${Math.max(1, Math.trunc(a.required_approvers ?? 1))}::int, COALESCE((SELECT CASE WHEN jsonb_typeof(settings->'required_approvers') = 'number' THEN (settings->>'required_approvers')::int END FROM tenant_settings WHERE tenant_id = ${tenantId}), 1)))`,
        initiator_user_id: a.initiator_user_id ?? null,
        acts_for_user_id: a.acts_for_user_id ?? null,
      })
      .execute();
  }

  /** The approvals of these actions so far, oldest first per action. */
  async votes(tenantId: string, actionIds: string[]): Promise<Map<string, ApprovalVote[]>> {
    const out = new Map<string, ApprovalVote[]>();
    if (!actionIds.length) return out;
    const rows = await this.db
      .selectFrom('approval_votes')
      .select(['action_id', 'member_id', 'member_email', 'note', 'voted_at'])
      .where('tenant_id', '=', tenantId)
      .where('action_id', 'in', actionIds)
      .orderBy('voted_at')
      .orderBy('member_id')
      .execute();
    for (const { action_id, ...v } of rows) out.set(action_id, [...(out.get(action_id) ?? []), v]);
    return out;
  }

  /**
   * The members who started the action and so never count as its approvers: the member whose console
   * session made the call, the member who issued the API key that made it (`api_keys.created_by`
   * `user:<email>`), and the member whose consent made the OAuth grant whose token made it.
   */
  async initiators(tenantId: string, row: Pick<ApprovalRow, 'initiator_user_id' | 'requested_by_key'>): Promise<string[]> {
    const ids = new Set<string>(row.initiator_user_id ? [row.initiator_user_id] : []);
    const key = row.requested_by_key;
    if (key?.startsWith('oauth-grant:')) {
      const grantId = key.slice('oauth-grant:'.length);
      if (/^[0-9a-f-]{36}$/i.test(grantId)) {
        const g = await this.db.selectFrom('oauth_grants').select('granted_by_user_id').where('tenant_id', '=', tenantId).where('id', '=', grantId).executeTakeFirst();
        if (g?.granted_by_user_id) ids.add(g.granted_by_user_id);
      }
    } else if (key) {
      const owner = await this.db
        .selectFrom('api_keys')
        .innerJoin('users', (j) => j.onRef('users.tenant_id', '=', 'api_keys.tenant_id').on(sql`'user:' || users.email`, '=', sql.ref('api_keys.created_by')))
        .select('users.id')
        .where('api_keys.tenant_id', '=', tenantId)
        .where('api_keys.key_hash', '=', key)
        .executeTakeFirst();
      if (owner) ids.add(owner.id);
    }
    return [...ids];
  }

  /**
   * One member's approval of a four-eyes action, in one transaction holding the action's row: the vote is
   * stored once per member (a second one is `duplicate`), and the vote that brings the count to
   * `required_approvers` moves the action to `approved` (decided_by names every approver). Undefined when
   * the action is not pending (decided, expired, or past its time at `now`) or unknown.
   */
  async vote(
    tenantId: string,
    actionId: string,
    member: { id: string; email: string },
    note: string | null,
    now: Date,
    binding: (row: { params_sha256: string | null; bundle_revision: string | null }) => ApprovalBinding,
  ): Promise<VoteOutcome | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = (await trx
        .selectFrom('approvals')
        .select(cols)
        .where('tenant_id', '=', tenantId)
        .where('action_id', '=', actionId)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .forUpdate()
        .executeTakeFirst()) as ApprovalRow | undefined;
      if (!row) return undefined;
      const inserted = await trx
        .insertInto('approval_votes')
        .values({ action_id: actionId, tenant_id: tenantId, member_id: member.id, member_email: member.email, note, voted_at: now })
        .onConflict((oc) => oc.columns(['action_id', 'member_id']).doNothing())
        .returning('member_id')
        .executeTakeFirst();
      const votes = await trx
        .selectFrom('approval_votes')
        .select(['member_id', 'member_email', 'note', 'voted_at'])
        .where('tenant_id', '=', tenantId)
        .where('action_id', '=', actionId)
        .orderBy('voted_at')
        .orderBy('member_id')
        .execute();
      if (!inserted) return { kind: 'duplicate' as const, row, votes };
      if (votes.length < row.required_approvers) return { kind: 'pending' as const, row, votes };
      const approved = (await trx
        .updateTable('approvals')
        .set({ status: 'approved', decided_at: now, decided_by: votes.map((v) => v.member_email).join(', '), note, decision_binding: JSON.stringify(binding(row)) })
        .where('tenant_id', '=', tenantId)
        .where('action_id', '=', actionId)
        .returning(cols)
        .executeTakeFirstOrThrow()) as ApprovalRow;
      return { kind: 'approved' as const, row: approved, votes };
    });
  }

  /** Take back a pending action whose record could not be appended (the caller was answered 5xx). */
  async withdraw(tenantId: string, actionId: string): Promise<void> {
    await this.db.deleteFrom('approvals').where('tenant_id', '=', tenantId).where('action_id', '=', actionId).where('status', '=', 'pending').execute();
  }

  /**
   * The oldest `limit` pending actions not expired at `now` (one the sweep has not reached yet is not shown),
   * narrowed by `filter`.
   */
  listPending(tenantId: string, now: Date, filter: PendingFilter = {}, limit = PENDING_LIST_LIMIT): Promise<ApprovalRow[]> {
    return this.pending(tenantId, now, filter).select(cols).orderBy('queued_at', 'asc').limit(limit).execute() as Promise<ApprovalRow[]>;
  }

  /** How many actions `listPending` would answer without its limit. */
  async countPending(tenantId: string, now: Date, filter: PendingFilter = {}): Promise<number> {
    const { n } = await this.pending(tenantId, now, filter).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(n);
  }

  private pending(tenantId: string, now: Date, filter: PendingFilter) {
    let q = this.db
      .selectFrom('approvals')
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    if (filter.queueReason) q = q.where('queue_reason', '=', filter.queueReason);
    if (filter.actionId) q = q.where('action_id', '=', filter.actionId);
    return q;
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
