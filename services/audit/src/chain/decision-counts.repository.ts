/**
 * Aggregate counts of a tenant's records by UTC day and decision, for the tenant's public dashboard
 * (gateway: transparency/). Only counts leave: never a record, an id or a parameter. One grouped query
 * over the tenant's records of the period. Not counted: control-plane changes (decision `changed`: who
 * changed settings, keys, members) and four-eyes votes (a `control_plane` record whose decision stays
 * `requires_human`): they are not decisions on calls.
 */
import type { Db } from '@agw/shared';
import { sql } from 'kysely';

export interface DecisionCount {
  day: string;
  decision: string;
  count: number;
}

export class DecisionCountsRepository {
  constructor(private readonly db: Db) {}

  /** The last `days` UTC days (today included), oldest first. */
  async counts(tenantId: string, days: number): Promise<DecisionCount[]> {
    const n = Math.min(Math.max(Math.trunc(days) || 30, 1), 366);
    const { rows } = await sql<{ day: string; decision: string; count: string }>`
      SELECT to_char(date_trunc('day', requested_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, decision, count(*) AS count
      FROM audit_records
      WHERE tenant_id = ${tenantId}
        AND NOT (source = 'control_plane' AND decision IN ('changed', 'requires_human'))
        AND requested_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(days => ${n - 1})
      GROUP BY 1, 2
      ORDER BY 1, 2`.execute(this.db);
    return rows.map((r) => ({ day: r.day, decision: r.decision, count: Number(r.count) }));
  }
}
