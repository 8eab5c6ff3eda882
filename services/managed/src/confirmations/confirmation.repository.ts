/**
 * The only queries on managed_tool_confirmations (migration 0021): one row per confirmation request a
 * session's platform raised, tenant id first. A row is `awaiting` until its answer reached the platform
 * (`sent`) or the platform refused it for good (`undeliverable`); while awaiting, `sent_at` leases a delivery so two
 * replicas never send the same answer at once.
 */
import type { Database, Db } from '@agw/shared';
import type { Selectable } from 'kysely';

export type ConfirmationRow = Selectable<Database['managed_tool_confirmations']>;
export type Answer = { result: 'allow' | 'deny'; reason: string; message: string | null };

/** How long a claimed delivery is exclusive (a replica that died mid-send leaves it to another after this). */
const DELIVERY_LEASE_MS = 30_000;

export class ConfirmationRepository {
  constructor(private readonly db: Db) {}

  find(tenantId: string, sessionId: string, toolUseId: string): Promise<ConfirmationRow | undefined> {
    return this.db.selectFrom('managed_tool_confirmations').selectAll().where('tenant_id', '=', tenantId).where('session_id', '=', sessionId).where('tool_use_id', '=', toolUseId).executeTakeFirst();
  }

  /** A new request; false when it was recorded before (the same tool use seen twice). */
  async insert(tenantId: string, r: { action_id: string; session_id: string; tool_use_id: string; tool_name: string } & Partial<Answer>): Promise<boolean> {
    const row = await this.db
      .insertInto('managed_tool_confirmations')
      .values({ tenant_id: tenantId, action_id: r.action_id, session_id: r.session_id, tool_use_id: r.tool_use_id, tool_name: r.tool_name, result: r.result ?? null, reason: r.reason ?? null, message: r.message ?? null })
      .onConflict((oc) => oc.doNothing())
      .returning('action_id')
      .executeTakeFirst();
    return Boolean(row);
  }

  async remove(tenantId: string, actionId: string): Promise<void> {
    await this.db.deleteFrom('managed_tool_confirmations').where('tenant_id', '=', tenantId).where('action_id', '=', actionId).where('state', '=', 'awaiting').execute();
  }

  /** Take the delivery of an awaiting request (null when another replica holds it, or it is done). */
  claimDelivery(tenantId: string, actionId: string, now = new Date()): Promise<ConfirmationRow | undefined> {
    return this.db
      .updateTable('managed_tool_confirmations')
      .set({ sent_at: now })
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .where('state', '=', 'awaiting')
      .where((eb) => eb.or([eb('sent_at', 'is', null), eb('sent_at', '<', new Date(now.getTime() - DELIVERY_LEASE_MS))]))
      .returningAll()
      .executeTakeFirst();
  }

  /** Give a claimed delivery back (the platform could not be reached: tried again later). */
  async releaseDelivery(tenantId: string, actionId: string): Promise<void> {
    await this.db.updateTable('managed_tool_confirmations').set({ sent_at: null }).where('tenant_id', '=', tenantId).where('action_id', '=', actionId).where('state', '=', 'awaiting').execute();
  }

  async finish(tenantId: string, actionId: string, state: 'sent' | 'undeliverable', answer: Answer): Promise<void> {
    await this.db
      .updateTable('managed_tool_confirmations')
      .set({ state, result: answer.result, reason: answer.reason, message: answer.message, sent_at: new Date() })
      .where('tenant_id', '=', tenantId)
      .where('action_id', '=', actionId)
      .execute();
  }

  /**
   * Requests that have an answer by now but were not sent, oldest first, across tenants (the delivery
   * sweep): their own (policy, not escalated), or their approval's, decided or expired. Requests still
   * waiting for a human are not read again and again.
   */
  deliverable(limit = 200): Promise<ConfirmationRow[]> {
    return this.db
      .selectFrom('managed_tool_confirmations as c')
      .leftJoin('approvals as a', (j) => j.onRef('a.tenant_id', '=', 'c.tenant_id').onRef('a.action_id', '=', 'c.action_id'))
      .selectAll('c')
      .where('c.state', '=', 'awaiting')
      .where((eb) => eb.or([eb('c.result', 'is not', null), eb('a.status', '!=', 'pending')]))
      .orderBy('c.created_at', 'asc')
      .limit(limit)
      .execute() as Promise<ConfirmationRow[]>;
  }
}
