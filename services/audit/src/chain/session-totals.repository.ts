/**
 * Live totals of managed sessions, computed from the chain on every read (the spec: "computed live from
 * the audit log, not cached"). One grouped query over the (tenant_id, session_id) index.
 *
 * - governed: records with source `mcp_governed` (calls through the gateway's MCP server)
 * - observed: records with source `mcp_observed` (built-in tool use seen on the session's event stream)
 * - denied: governed records whose decision is `deny`
 * - pending: governed `requires_human` records with no human decision (a `control_plane` record of the
 *   same action, not a four-eyes vote, whose decision stays `requires_human`) appended since
 */
import type { Db } from '@agw/shared';
import { sql } from 'kysely';

export interface SessionTotals {
  session_id: string;
  governed: number;
  observed: number;
  denied: number;
  pending: number;
}

export class SessionTotalsRepository {
  constructor(private readonly db: Db) {}

  async totals(tenantId: string, sessionIds: string[]): Promise<SessionTotals[]> {
    if (!sessionIds.length) return [];
    const { rows } = await sql<{ session_id: string; governed: string; observed: string; denied: string; pending: string }>`
      SELECT r.session_id,
        count(*) FILTER (WHERE r.source = 'mcp_governed') AS governed,
        count(*) FILTER (WHERE r.source = 'mcp_observed') AS observed,
        count(*) FILTER (WHERE r.source = 'mcp_governed' AND r.decision = 'deny') AS denied,
        count(*) FILTER (WHERE r.source = 'mcp_governed' AND r.decision = 'requires_human' AND NOT EXISTS (
          SELECT 1 FROM audit_records d
          WHERE d.tenant_id = r.tenant_id AND d.session_id = r.session_id AND d.action_id = r.action_id AND d.source = 'control_plane' AND d.decision <> 'requires_human'
        )) AS pending
      FROM audit_records r
      WHERE r.tenant_id = ${tenantId} AND r.session_id = ANY(${sessionIds}::text[])
      GROUP BY r.session_id`.execute(this.db);
    const found = new Map(rows.map((r) => [r.session_id, r]));
    return sessionIds.map((id) => {
      const r = found.get(id);
      return { session_id: id, governed: Number(r?.governed ?? 0), observed: Number(r?.observed ?? 0), denied: Number(r?.denied ?? 0), pending: Number(r?.pending ?? 0) };
    });
  }
}
