/**
 * The only queries on policy_shadows / policy_shadow_batches / policy_shadow_decisions. Tenant id first,
 * always. Every call a candidate decided is one element of its batch's row (policy_shadow_batches: action
 * id, both decisions, both evaluation times); a call whose outcome differs from the live one (decision or
 * violations) also keeps its full row in policy_shadow_decisions (samples, rules). One tuple per batch is
 * what keeps a shadow cheap for Postgres (docs/policy.md, "What it costs").
 */
import { type Db, NotFoundError } from '@agw/shared';
import { sql } from 'kysely';

export interface StoredShadow {
  shadow_id: string;
  tenant_id: string;
  status: string;
  policy_template: string;
  policy_overrides: Record<string, unknown>;
  custom_policy: string | null;
  revision: string;
  bundle_hash: string;
  max_calls: number;
  calls: number;
  dropped: number;
  started_by: string;
  started_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  source_revision: string | null;
  source_digest: string | null;
}

export interface ShadowDecisionRow {
  action_id: string;
  agent_id: string;
  tool: string;
  live_decision: string;
  live_violations: string[];
  live_revision: string;
  live_eval_ms: number;
  candidate_decision: string;
  candidate_violations: string[];
  candidate_eval_ms: number;
  differs: boolean;
  decided_at: Date;
}

export interface ShadowFigures {
  transitions: Array<{ live: string; candidate: string; count: number }>;
  rules: Array<{ rule: string; change: 'added' | 'removed'; count: number }>;
  samples: ShadowDecisionRow[];
  differing: number;
  liveEvalMsAvg: number;
  candidateEvalMsAvg: number;
  candidateEvalMsMax: number;
}

const COLUMNS = [
  'shadow_id',
  'tenant_id',
  'status',
  'policy_template',
  'policy_overrides',
  'custom_policy',
  'revision',
  'bundle_hash',
  'max_calls',
  'calls',
  'dropped',
  'started_by',
  'started_at',
  'expires_at',
  'ended_at',
  'end_reason',
  'source_revision',
  'source_digest',
] as const;

export class ShadowRepository {
  constructor(private readonly db: Db) {}

  /** The running shadow, else the last one the tenant had. */
  async latest(tenantId: string): Promise<StoredShadow | undefined> {
    return this.db
      .selectFrom('policy_shadows')
      .select(COLUMNS)
      .where('tenant_id', '=', tenantId)
      .orderBy(sql`status = 'running'`, 'desc')
      .orderBy('started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async running(tenantId: string): Promise<StoredShadow | undefined> {
    return this.db.selectFrom('policy_shadows').select(COLUMNS).where('tenant_id', '=', tenantId).where('status', '=', 'running').executeTakeFirst();
  }

  /** Postgres error 23505 (policy_shadows_running) when one runs already. */
  async insert(tenantId: string, s: Omit<StoredShadow, 'tenant_id' | 'status' | 'calls' | 'dropped' | 'started_at' | 'ended_at' | 'end_reason'>): Promise<StoredShadow> {
    return this.db
      .insertInto('policy_shadows')
      .values({ ...s, tenant_id: tenantId, status: 'running', policy_overrides: JSON.stringify(s.policy_overrides) })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
  }

  /** Ends the running shadow (`status` promoted, discarded or ended); undefined when it no longer runs (another replica ended it). */
  async end(tenantId: string, shadowId: string, status: 'ended' | 'promoted' | 'discarded', reason: string): Promise<StoredShadow | undefined> {
    return this.db
      .updateTable('policy_shadows')
      .set({ status, end_reason: reason, ended_at: new Date() })
      .where('tenant_id', '=', tenantId)
      .where('shadow_id', '=', shadowId)
      .where('status', '=', 'running')
      .returning(COLUMNS)
      .executeTakeFirst();
  }

  /**
   * Keeps the candidate's decisions of a batch while the shadow runs and has calls left: the shadow's row is
   * locked, `calls` grows by the rows kept (never past max_calls) and `dropped` by the calls the queue had
   * to drop. Answers how many were kept, and whether the shadow is now full or expired (the caller ends it).
   */
  async keep(tenantId: string, shadowId: string, rows: ShadowDecisionRow[], dropped: number): Promise<{ kept: number; full: boolean; expired: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const s = await trx
        .selectFrom('policy_shadows')
        .select(['status', 'calls', 'max_calls', 'expires_at'])
        .where('tenant_id', '=', tenantId)
        .where('shadow_id', '=', shadowId)
        .forUpdate()
        .executeTakeFirst();
      if (!s || s.status !== 'running') return { kept: 0, full: false, expired: false };
      if (s.expires_at.getTime() <= Date.now()) return { kept: 0, full: false, expired: true };
      const kept = rows.slice(0, Math.max(0, s.max_calls - s.calls));
      if (kept.length) {
        await trx
          .insertInto('policy_shadow_batches')
          .values({
            shadow_id: shadowId,
            tenant_id: tenantId,
            batch_id: crypto.randomUUID(),
            decided_at: kept[kept.length - 1]!.decided_at,
            action_ids: kept.map((r) => r.action_id),
            live_decisions: kept.map((r) => r.live_decision),
            candidate_decisions: kept.map((r) => r.candidate_decision),
            live_eval_ms: kept.map((r) => r.live_eval_ms),
            candidate_eval_ms: kept.map((r) => r.candidate_eval_ms),
          })
          .execute();
        const detailed = kept.filter(outcomeDiffers);
        if (detailed.length) {
          await trx
            .insertInto('policy_shadow_decisions')
            .values(detailed.map((r) => ({ ...r, shadow_id: shadowId, tenant_id: tenantId, live_violations: JSON.stringify(r.live_violations), candidate_violations: JSON.stringify(r.candidate_violations) })))
            .onConflict((oc) => oc.columns(['shadow_id', 'action_id']).doNothing())
            .execute();
        }
      }
      if (kept.length || dropped) {
        await trx
          .updateTable('policy_shadows')
          .set((eb) => ({ calls: eb('calls', '+', kept.length), dropped: eb('dropped', '+', dropped) }))
          .where('shadow_id', '=', shadowId)
          .execute();
      }
      return { kept: kept.length, full: s.calls + kept.length >= s.max_calls, expired: false };
    });
  }

  /** Counts by live → candidate decision, the rules behind the differences, the latest differing calls. */
  async figures(tenantId: string, shadowId: string, samples = 20): Promise<ShadowFigures> {
    const [transitions, added, removed, rows, times] = await Promise.all([
      sql<{ live: string; candidate: string; count: number }>`
        SELECT c.live, c.candidate, count(*)::int AS count FROM policy_shadow_batches b CROSS JOIN LATERAL unnest(b.live_decisions, b.candidate_decisions) AS c(live, candidate)
        WHERE b.tenant_id = ${tenantId} AND b.shadow_id = ${shadowId} GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2`.execute(this.db),
      sql<{ rule: string; count: number }>`
        SELECT v AS rule, count(*)::int AS count FROM policy_shadow_decisions d CROSS JOIN LATERAL jsonb_array_elements_text(d.candidate_violations) v
        WHERE d.tenant_id = ${tenantId} AND d.shadow_id = ${shadowId} AND d.differs AND NOT d.live_violations ? v GROUP BY 1 ORDER BY 2 DESC, 1`.execute(this.db),
      sql<{ rule: string; count: number }>`
        SELECT v AS rule, count(*)::int AS count FROM policy_shadow_decisions d CROSS JOIN LATERAL jsonb_array_elements_text(d.live_violations) v
        WHERE d.tenant_id = ${tenantId} AND d.shadow_id = ${shadowId} AND d.differs AND NOT d.candidate_violations ? v GROUP BY 1 ORDER BY 2 DESC, 1`.execute(this.db),
      this.db
        .selectFrom('policy_shadow_decisions')
        .select(['action_id', 'agent_id', 'tool', 'live_decision', 'live_violations', 'live_revision', 'live_eval_ms', 'candidate_decision', 'candidate_violations', 'candidate_eval_ms', 'differs', 'decided_at'])
        .where('tenant_id', '=', tenantId)
        .where('shadow_id', '=', shadowId)
        .where('differs', '=', true)
        .orderBy('decided_at', 'desc')
        .orderBy('action_id')
        .limit(samples)
        .execute(),
      sql<{ differing: number; live_avg: number | null; cand_avg: number | null; cand_max: number | null }>`
        SELECT count(*) FILTER (WHERE c.live <> c.candidate)::int AS differing, avg(c.live_ms) AS live_avg, avg(c.cand_ms) AS cand_avg, max(c.cand_ms) AS cand_max
        FROM policy_shadow_batches b CROSS JOIN LATERAL unnest(b.live_decisions, b.candidate_decisions, b.live_eval_ms, b.candidate_eval_ms) AS c(live, candidate, live_ms, cand_ms)
        WHERE b.tenant_id = ${tenantId} AND b.shadow_id = ${shadowId}`.execute(this.db),
    ]);
    const t = times.rows[0];
    return {
      transitions: transitions.rows,
      rules: [...added.rows.map((r) => ({ ...r, change: 'added' as const })), ...removed.rows.map((r) => ({ ...r, change: 'removed' as const }))],
      samples: rows,
      differing: t?.differing ?? 0,
      liveEvalMsAvg: Number(t?.live_avg ?? 0),
      candidateEvalMsAvg: Number(t?.cand_avg ?? 0),
      candidateEvalMsMax: Number(t?.cand_max ?? 0),
    };
  }
}

/** The candidate said something else than the live policy: another decision, or other violations. */
function outcomeDiffers(r: ShadowDecisionRow): boolean {
  if (r.differs || r.live_violations.length !== r.candidate_violations.length) return true;
  const live = new Set(r.live_violations);
  return r.candidate_violations.some((v) => !live.has(v));
}

export function notRunning(): NotFoundError {
  return new NotFoundError('No shadow runs for this tenant (start one with PUT /api/policy/shadow)');
}
