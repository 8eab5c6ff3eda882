/**
 * The only queries on managed_sessions. Tenant id first on every tenant-facing method; the consumer
 * lease methods work across tenants by design (a replica resumes whatever active session lost its owner).
 */
import { RateLimitError, type Database, type Db } from '@agw/shared';
import { type Selectable, sql } from 'kysely';
import { isUuid } from '../agents/agent-config.repository';

export type SessionRow = Selectable<Database['managed_sessions']>;

export interface SessionLimits {
  maxConcurrent: number;
  maxDaily: number;
  /** the config's max_daily_sessions (null: no per-agent cap) */
  maxDailyForAgent: number | null;
}

export interface NewSession {
  id: string;
  agent_id: string;
  system_prompt_hash: string;
  mcp_server_url: string;
  bundle_revision: string;
  metadata: Record<string, unknown>;
  expires_at: Date;
}

export class SessionRepository {
  constructor(
    private readonly db: Db,
    /** told once per session that ended (metrics) */
    private readonly onEnded: (status: string) => void = () => undefined,
  ) {}

  /**
   * Check the three session limits and insert the session as `active`, atomically: a per-tenant advisory
   * lock serialises concurrent creations of one tenant, so two requests can never both take the last slot.
   */
  async reserve(tenantId: string, s: NewSession, limits: SessionLimits): Promise<SessionRow> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`managed-sessions:${tenantId}`}))`.execute(trx);
      const dayAgo = new Date(Date.now() - 24 * 3600_000);
      const counts = await trx
        .selectFrom('managed_sessions')
        .select([
          sql<number>`count(*) FILTER (WHERE status = 'active')::int`.as('active'),
          sql<number>`count(*) FILTER (WHERE created_at > ${dayAgo})::int`.as('daily'),
          sql<number>`count(*) FILTER (WHERE created_at > ${dayAgo} AND agent_id = ${s.agent_id})::int`.as('agent_daily'),
          sql<Date | null>`min(created_at) FILTER (WHERE created_at > ${dayAgo})`.as('oldest'),
          sql<Date | null>`min(created_at) FILTER (WHERE created_at > ${dayAgo} AND agent_id = ${s.agent_id})`.as('agent_oldest'),
        ])
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
      // Retry-After: when the oldest session of the 24-hour window leaves it (a minute for the concurrent limit)
      const freedIn = (oldest: Date | null) => (oldest ? Math.max(1, Math.ceil((new Date(oldest).getTime() + 24 * 3600_000 - Date.now()) / 1000)) : 60);
      if (counts.active >= limits.maxConcurrent) {
        const m = `Concurrent session limit exceeded: the tenant already has ${counts.active} active managed sessions (limit ${limits.maxConcurrent}, DEFAULT_MAX_CONCURRENT_SESSIONS)`;
        throw new RateLimitError(m, m, 60);
      }
      if (counts.daily >= limits.maxDaily) {
        const m = `Daily session limit exceeded: the tenant started ${counts.daily} managed sessions in the last 24 hours (limit ${limits.maxDaily})`;
        throw new RateLimitError(m, m, freedIn(counts.oldest));
      }
      if (limits.maxDailyForAgent !== null && counts.agent_daily >= limits.maxDailyForAgent) {
        const m = `Per-agent session limit exceeded: agent ${s.agent_id} started ${counts.agent_daily} sessions in the last 24 hours (max_daily_sessions ${limits.maxDailyForAgent})`;
        throw new RateLimitError(m, m, freedIn(counts.agent_oldest));
      }
      return trx
        .insertInto('managed_sessions')
        .values({ ...s, tenant_id: tenantId, status: 'active', metadata: JSON.stringify(s.metadata) })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
  }

  async setPlatform(tenantId: string, id: string, p: { anthropic_session_id: string; platform_vault_id: string; environment_id: string }): Promise<SessionRow> {
    return this.db.updateTable('managed_sessions').set(p).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  async get(tenantId: string, id: string): Promise<SessionRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.db.selectFrom('managed_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  }

  async list(tenantId: string, f: { status?: string; agentId?: string }): Promise<SessionRow[]> {
    let q = this.db.selectFrom('managed_sessions').selectAll().where('tenant_id', '=', tenantId);
    if (f.status) q = q.where('status', '=', f.status as SessionRow['status']);
    if (f.agentId) {
      if (!isUuid(f.agentId)) return [];
      q = q.where('agent_id', '=', f.agentId);
    }
    return q.orderBy('created_at', 'desc').limit(1000).execute();
  }

  /**
   * Move an active session to an end state, once: a conditional UPDATE, so a concurrent interrupt and a
   * platform status event cannot both win. Returns the row if this call ended it.
   */
  async end(
    tenantId: string,
    id: string,
    status: 'completed' | 'interrupted' | 'failed',
    extra: { end_reason: string; interrupt_reason?: string; auto_triggered?: boolean; interrupt_action_id?: string },
  ): Promise<SessionRow | undefined> {
    const now = new Date();
    const row = await this.db
      .updateTable('managed_sessions')
      .set({
        status,
        ended_at: now,
        end_reason: extra.end_reason,
        ...(status === 'interrupted' ? { interrupted_at: now, interrupt_reason: extra.interrupt_reason ?? null, auto_triggered: extra.auto_triggered ?? false, interrupt_action_id: extra.interrupt_action_id ?? null } : {}),
      })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst();
    if (row) this.onEnded(status);
    return row;
  }

  // --- the event consumer's lease and progress ---

  /** Take (or keep) the stream lease of an active session; undefined if another live replica holds it. */
  async claim(id: string, owner: string, leaseSeconds: number): Promise<SessionRow | undefined> {
    return this.db
      .updateTable('managed_sessions')
      .set({ consumer_owner: owner, consumer_lease_until: sql`now() + make_interval(secs => ${leaseSeconds})` })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('consumer_owner', 'is', null), eb('consumer_owner', '=', owner), eb('consumer_lease_until', '<', sql<Date>`now()`)]))
      .returningAll()
      .executeTakeFirst();
  }

  /** Active sessions with a platform session whose lease is free or expired (to resume after a restart). */
  async orphans(owner: string, limit = 100): Promise<SessionRow[]> {
    return this.db
      .selectFrom('managed_sessions')
      .selectAll()
      .where('status', '=', 'active')
      .where('anthropic_session_id', 'is not', null)
      .where('consumer_status', '!=', 'idle_timeout')
      .where((eb) => eb.or([eb('consumer_owner', 'is', null), eb('consumer_owner', '=', owner), eb('consumer_lease_until', '<', sql<Date>`now()`)]))
      .orderBy('created_at', 'asc')
      .limit(limit)
      .execute();
  }

  /** Renew every lease this replica holds; returns the ids it still holds. */
  async renew(owner: string, ids: string[], leaseSeconds: number): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.db
      .updateTable('managed_sessions')
      .set({ consumer_lease_until: sql`now() + make_interval(secs => ${leaseSeconds})` })
      .where('id', 'in', ids)
      .where('consumer_owner', '=', owner)
      .where('status', '=', 'active')
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  async release(owner: string, id: string, consumerStatus: string): Promise<void> {
    await this.db
      .updateTable('managed_sessions')
      .set({ consumer_owner: null, consumer_lease_until: null, consumer_status: consumerStatus })
      .where('id', '=', id)
      .where('consumer_owner', '=', owner)
      .execute();
  }

  async consumerState(id: string, s: { consumer_status: string; connected_since?: Date | null }): Promise<void> {
    await this.db.updateTable('managed_sessions').set(s).where('id', '=', id).execute();
  }

  /** One processed platform event: its id is the resume point. */
  async progress(id: string, lastEventId: string, anomalyScore: number): Promise<void> {
    await this.db
      .updateTable('managed_sessions')
      .set({
        last_event_id: lastEventId,
        events_processed: sql`events_processed + 1`,
        last_activity_at: sql`now()`,
        max_anomaly_score: sql`greatest(max_anomaly_score, ${anomalyScore})`,
      })
      .where('id', '=', id)
      .execute();
  }

  async touch(tenantId: string, id: string): Promise<void> {
    if (!isUuid(id)) return;
    await this.db.updateTable('managed_sessions').set({ last_activity_at: sql`now()` }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
  }

  async consumers(tenantId: string): Promise<SessionRow[]> {
    return this.db
      .selectFrom('managed_sessions')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb.or([eb('status', '=', 'active'), eb('consumer_owner', 'is not', null)]))
      .orderBy('created_at', 'desc')
      .limit(1000)
      .execute();
  }

  /** Active sessions of all tenants (a gauge). */
  async countActive(): Promise<number> {
    const r = await this.db.selectFrom('managed_sessions').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'active').executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Active sessions past their max_session_hours. */
  async expired(limit = 100): Promise<SessionRow[]> {
    return this.db.selectFrom('managed_sessions').selectAll().where('status', '=', 'active').where('expires_at', '<', sql<Date>`now()`).limit(limit).execute();
  }
}
