/** The export's read of audit records in a time range. Tenant id first, always. */
import type { Db } from '@agw/shared';
import type { ExportSummary } from '@agw/verifier';
import { sql } from 'kysely';
import type { StoredRecord } from '../chain/audit-record.repository';

/** The export's `summary` but for what the exporter adds (how many records it listed, whether it cut the list). */
export type RangeStats = Omit<ExportSummary, 'records_exported' | 'truncated'>;

export class ExportRepository {
  constructor(private readonly db: Db) {}

  /** Records with from <= requested_at < to in chain order, at most `limit`. */
  async records(tenantId: string, from: Date, to: Date, limit: number): Promise<StoredRecord[]> {
    const rows = await this.db
      .selectFrom('audit_records')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('requested_at', '>=', from)
      .where('requested_at', '<', to)
      .orderBy('tenant_seq', 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      ...(r as unknown as StoredRecord),
      id: Number(r.id),
      tenant_seq: Number(r.tenant_seq),
      requested_at: r.requested_at.toISOString(),
    }));
  }

  async stats(tenantId: string, from: Date, to: Date): Promise<RangeStats> {
    const rows = await sql<{ decision: string; severity: string; n: number }>`
      SELECT decision, severity, count(*)::bigint AS n FROM audit_records
      WHERE tenant_id = ${tenantId} AND requested_at >= ${from} AND requested_at < ${to}
      GROUP BY decision, severity`.execute(this.db);
    const agg = await sql<{ agents: number; tools: number; first_at: Date | null; last_at: Date | null }>`
      SELECT count(DISTINCT agent_id)::bigint AS agents, count(DISTINCT tool)::bigint AS tools, min(requested_at) AS first_at, max(requested_at) AS last_at
      FROM audit_records WHERE tenant_id = ${tenantId} AND requested_at >= ${from} AND requested_at < ${to}`.execute(this.db);
    const by_decision: Record<string, number> = {};
    const by_severity: Record<string, number> = {};
    let total = 0;
    for (const r of rows.rows) {
      const n = Number(r.n);
      total += n;
      by_decision[r.decision] = (by_decision[r.decision] ?? 0) + n;
      by_severity[r.severity] = (by_severity[r.severity] ?? 0) + n;
    }
    const a = agg.rows[0];
    return {
      total,
      by_decision,
      by_severity,
      distinct_agents: Number(a?.agents ?? 0),
      distinct_tools: Number(a?.tools ?? 0),
      first_at: a?.first_at ? a.first_at.toISOString() : null,
      last_at: a?.last_at ? a.last_at.toISOString() : null,
    };
  }
}
