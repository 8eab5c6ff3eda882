/**
 * The only queries on webhook_deliveries / webhook_attempts. Tenant id first, always; the exceptions are
 * the maintenance queries over every tenant (`claimDue`, which hands each row back with its tenant,
 * `pendingCount` for the backlog metric, `purgeCompletedBefore` for retention). No API reaches them; they
 * are limited to this fleet's deliveries (its stream prefix), so fleets sharing a database stay apart.
 */
import type { Database, Db } from '@agw/shared';
import { type Selectable, sql } from 'kysely';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface NewDelivery {
  id: string;
  eventId: string;
  event: string;
  actionId: string | null;
  url: string;
  body: string;
  isTest: boolean;
  /** first attempt due in this many ms (a lease when the caller attempts at once itself) */
  dueInMs: number;
}

/** A delivery as its table type defines it (without the fleet's stream prefix, which only filters). */
export type DeliveryRow = Omit<Selectable<Database['webhook_deliveries']>, 'stream_prefix'>;

/** One attempt as its table type defines it. */
export type AttemptRow = Omit<Selectable<Database['webhook_attempts']>, 'delivery_id' | 'tenant_id'>;

export interface AttemptRecord {
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  outcome: string;
  error: string | null;
}

export interface ListFilter {
  limit: number;
  status?: DeliveryStatus;
  actionId?: string;
  event?: string;
}

const columns = [
  'id',
  'tenant_id',
  'event_id',
  'event',
  'action_id',
  'url',
  'body',
  'is_test',
  'status',
  'attempts',
  'next_attempt_at',
  'last_status_code',
  'last_error',
  'created_at',
  'completed_at',
] as const;

const interval = (ms: number) => sql<Date>`now() + make_interval(secs => ${ms / 1000})`;

export class DeliveryRepository {
  /** `streamPrefix`: the fleet's AGW_STREAM_PREFIX, stored on every delivery it accepts */
  constructor(
    private readonly db: Db,
    private readonly streamPrefix = '',
  ) {}

  /** Insert unless this tenant already has a delivery for the event (a redelivered message); true when inserted. */
  async insert(tenantId: string, d: NewDelivery): Promise<boolean> {
    const r = await this.db
      .insertInto('webhook_deliveries')
      .values({
        id: d.id,
        tenant_id: tenantId,
        event_id: d.eventId,
        event: d.event,
        action_id: d.actionId,
        url: d.url,
        body: d.body,
        is_test: d.isTest,
        next_attempt_at: interval(d.dueInMs),
        stream_prefix: this.streamPrefix,
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'event_id']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * Claim up to `limit` due deliveries of any tenant, oldest first, at most `perTenant` of one tenant and
   * none of the tenants in `skipTenants` (those already at their share on this replica), so one tenant's
   * slow receiver cannot take every slot. Claimed rows move `leaseMs` ahead: another replica (SKIP LOCKED
   * now, the time check later) leaves them alone until this one records the attempt; if this replica dies,
   * the row is due again when the lease ends.
   */
  async claimDue(limit: number, leaseMs: number, o: { perTenant: number; skipTenants: string[] }): Promise<DeliveryRow[]> {
    let due = this.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'next_attempt_at', sql<number>`row_number() OVER (PARTITION BY tenant_id ORDER BY next_attempt_at)`.as('rank')])
      .where('stream_prefix', '=', this.streamPrefix)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', sql<Date>`now()`);
    if (o.skipTenants.length) due = due.where('tenant_id', 'not in', o.skipTenants);
    const candidates = this.db.selectFrom(due.as('due')).select('due.id').where('due.rank', '<=', o.perTenant).orderBy('due.next_attempt_at').limit(limit);
    const rows = await this.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: interval(leaseMs) })
      .where(
        'id',
        'in',
        this.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('id', 'in', candidates)
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', sql<Date>`now()`)
          .forUpdate()
          .skipLocked(),
      )
      .where('status', '=', 'pending')
      .returning(columns)
      .execute();
    return rows as DeliveryRow[];
  }

  /** Give a claimed delivery back (due at once) without attempting it. */
  async release(tenantId: string, deliveryId: string): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set({ next_attempt_at: sql<Date>`now()` }).where('tenant_id', '=', tenantId).where('id', '=', deliveryId).where('status', '=', 'pending').execute();
  }

  /** Deliveries not final yet, over all tenants (the backlog metric). */
  async pendingCount(): Promise<number> {
    const r = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('stream_prefix', '=', this.streamPrefix)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Delete up to `batch` final deliveries (and their attempts) completed more than `days` ago; returns how many. */
  async purgeCompletedBefore(days: number, batch = 1000): Promise<number> {
    const r = await this.db
      .deleteFrom('webhook_deliveries')
      .where(
        'id',
        'in',
        this.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('stream_prefix', '=', this.streamPrefix)
          .where('status', '<>', 'pending')
          .where('completed_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
          .limit(batch),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Log one attempt and move the delivery on: delivered, failed, or pending again after `delayMs`. */
  async recordAttempt(
    tenantId: string,
    deliveryId: string,
    a: AttemptRecord,
    next: { status: 'delivered' | 'failed' } | { status: 'pending'; delayMs: number },
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: deliveryId,
          tenant_id: tenantId,
          attempt: a.attempt,
          started_at: a.startedAt,
          duration_ms: a.durationMs,
          status_code: a.statusCode,
          outcome: a.outcome,
          error: a.error,
        })
        .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: next.status,
          attempts: a.attempt,
          last_status_code: a.statusCode,
          last_error: a.error,
          next_attempt_at: next.status === 'pending' ? interval(next.delayMs) : null,
          completed_at: next.status === 'pending' ? null : sql<Date>`now()`,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', deliveryId)
        .execute();
    });
  }

  async list(tenantId: string, f: ListFilter): Promise<DeliveryRow[]> {
    let q = this.db.selectFrom('webhook_deliveries').select(columns).where('tenant_id', '=', tenantId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.actionId) q = q.where('action_id', '=', f.actionId);
    if (f.event) q = q.where('event', '=', f.event);
    return (await q.orderBy('created_at', 'desc').orderBy('id').limit(f.limit).execute()) as DeliveryRow[];
  }

  async get(tenantId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
    return (await this.db.selectFrom('webhook_deliveries').select(columns).where('tenant_id', '=', tenantId).where('id', '=', deliveryId).executeTakeFirst()) as
      | DeliveryRow
      | undefined;
  }

  /** The attempts of the given deliveries, oldest first, keyed by delivery id. */
  async attempts(tenantId: string, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
    const out = new Map<string, AttemptRow[]>();
    if (!deliveryIds.length) return out;
    const rows = await this.db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'attempt', 'started_at', 'duration_ms', 'status_code', 'outcome', 'error'])
      .where('tenant_id', '=', tenantId)
      .where('delivery_id', 'in', deliveryIds)
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    for (const { delivery_id, ...a } of rows) {
      const list = out.get(delivery_id) ?? [];
      list.push(a as AttemptRow);
      out.set(delivery_id, list);
    }
    return out;
  }
}
