/**
 * The only queries of the federation catalog (docs/federation.md): a tenant's upstream MCP servers and the
 * tools seen on each, with their pinned and candidate definitions, and the tools kept for the name of a
 * deleted upstream (`federation_retained_tools`: its pins and quarantines, until the name is registered
 * again or a human discards them). Every method takes the tenant id first and filters on it. The sealed
 * credential is read only by `forConnection` (the connector's path).
 */
import type { Database, Db } from '@agw/shared';
import { type Insertable, type Selectable, sql } from 'kysely';

type FederationUpstreamsTable = Database['federation_upstreams'];
type FederationToolsTable = Database['federation_tools'];

export type UpstreamRow = Selectable<FederationUpstreamsTable>;
export type UpstreamMeta = Omit<UpstreamRow, 'sealed' | 'key_id'>;
export type ToolRow = Selectable<FederationToolsTable>;
export type NewUpstream = Omit<Insertable<FederationUpstreamsTable>, 'tenant_id' | 'credential_meta' | 'sealed' | 'tool_filter' | 'server_info'> & {
  credential_meta: Record<string, string>;
  sealed: Record<string, string> | null;
  tool_filter: { include?: string[]; exclude?: string[] };
};
export type ToolWrite = Omit<ToolRow, 'tenant_id' | 'upstream' | 'first_seen_at' | 'updated_at' | 'approved_at' | 'approved_by'> & { approved_at?: Date | null; approved_by?: string | null };

const META_COLUMNS = [
  'tenant_id',
  'name',
  'url',
  'transport',
  'description',
  'credential_type',
  'credential_meta',
  'tool_filter',
  'tool_approval',
  'timeout_ms',
  'status',
  'status_reason',
  'server_info',
  'created_at',
  'refreshed_at',
  'connection',
] as const;

/** The columns a tool row and a kept tool row share. */
const TOOL_COLUMNS = sql.raw(
  'tenant_id, upstream, name, state, reason, markers, pinned, pinned_sha256, candidate, candidate_sha256, first_seen_at, updated_at, approved_at, approved_by',
);

/** What the name of a deleted upstream keeps: its tools with a pinned definition or a quarantine. */
export interface RetainedTools {
  /** tools kept */
  tools: number;
  /** of them, with a pinned definition */
  pinned: number;
  /** of them, quarantined when the upstream was deleted */
  quarantined: number;
}

const retainedOf = (rows: Array<{ state: string; pinned_sha256: string | null }>): RetainedTools => ({
  tools: rows.length,
  pinned: rows.filter((r) => r.pinned_sha256 !== null).length,
  quarantined: rows.filter((r) => r.state === 'quarantined').length,
});

/** json and jsonb columns take their JSON text (`pinned` and `candidate` are json: the text as written, key order included) */
const json = (v: unknown) => JSON.stringify(v);

export class UpstreamRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the upstream and, in the same transaction, moves the tools kept for its name back into its
   * catalog (an `active` one comes back `absent` until the upstream offers it again). `admit` sees what
   * was kept and may refuse by throwing: nothing is written then. Undefined when the name is taken for
   * this tenant.
   */
  async insert(tenantId: string, u: NewUpstream, admit?: (kept: RetainedTools) => void): Promise<UpstreamMeta | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .insertInto('federation_upstreams')
        .values({
          ...u,
          tenant_id: tenantId,
          credential_meta: json(u.credential_meta),
          sealed: u.sealed ? json(u.sealed) : null,
          tool_filter: json(u.tool_filter),
        } as never)
        .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
        .returning(META_COLUMNS)
        .executeTakeFirst();
      if (!row) return undefined;
      // one statement: the rows a concurrent discard removes are either all moved here or gone
      const moved = await sql<{ state: string; pinned_sha256: string | null }>`
        WITH kept AS (
          DELETE FROM federation_retained_tools WHERE tenant_id = ${tenantId} AND upstream = ${u.name}
          RETURNING ${TOOL_COLUMNS}
        )
        INSERT INTO federation_tools (${TOOL_COLUMNS})
        SELECT tenant_id, upstream, name, CASE WHEN state = 'active' THEN 'absent' ELSE state END, reason, markers, pinned,
               pinned_sha256, candidate, candidate_sha256, first_seen_at, now(), approved_at, approved_by
        FROM kept
        RETURNING state, pinned_sha256
      `.execute(tx);
      admit?.(retainedOf(moved.rows));
      return row;
    });
  }

  list(tenantId: string): Promise<UpstreamMeta[]> {
    return this.db.selectFrom('federation_upstreams').select(META_COLUMNS).where('tenant_id', '=', tenantId).orderBy('name').execute();
  }

  get(tenantId: string, name: string): Promise<UpstreamMeta | undefined> {
    return this.db.selectFrom('federation_upstreams').select(META_COLUMNS).where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  }

  /** The upstream with its sealed credential: only the connector opens it. */
  forConnection(tenantId: string, name: string): Promise<UpstreamRow | undefined> {
    return this.db.selectFrom('federation_upstreams').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  }

  /**
   * One round trip for a governed call: the upstream (with its sealed credential), the called tool's state
   * and its pinned definition's `execution.taskSupport`.
   */
  forCall(
    tenantId: string,
    name: string,
    tool: string,
  ): Promise<(UpstreamRow & { tool_state: string | null; tool_reason: string | null; tool_task_support: string | null; tool_pinned_sha256: string | null }) | undefined> {
    return this.db
      .selectFrom('federation_upstreams as u')
      .leftJoin('federation_tools as t', (j) => j.onRef('t.tenant_id', '=', 'u.tenant_id').onRef('t.upstream', '=', 'u.name').on('t.name', '=', tool))
      .selectAll('u')
      .select(['t.state as tool_state', 't.reason as tool_reason', 't.pinned_sha256 as tool_pinned_sha256', sql<string | null>`t.pinned -> 'execution' ->> 'taskSupport'`.as('tool_task_support')])
      .where('u.tenant_id', '=', tenantId)
      .where('u.name', '=', name)
      .executeTakeFirst();
  }

  /**
   * Deletes the upstream (its tools go with it). With `retain`, first keeps its tools that carry a pinned
   * definition or a quarantine for the name, as they are. The upstream row is locked first, so a read of
   * its tools that writes meanwhile waits and then finds no upstream. `kept`: how many tools were kept, or
   * (without `retain`) would have been. Undefined when there is no such upstream.
   */
  async delete(tenantId: string, name: string, retain: boolean): Promise<(UpstreamMeta & { kept: number }) | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const locked = await tx.selectFrom('federation_upstreams').select('name').where('tenant_id', '=', tenantId).where('name', '=', name).forUpdate().executeTakeFirst();
      if (!locked) return undefined;
      let kept = 0;
      if (!retain) {
        const n = await tx
          .selectFrom('federation_tools')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('tenant_id', '=', tenantId)
          .where('upstream', '=', name)
          .where((eb) => eb.or([eb('pinned_sha256', 'is not', null), eb('state', '=', 'quarantined')]))
          .executeTakeFirst();
        kept = Number(n?.n ?? 0);
      } else {
        const rows = await sql<{ name: string }>`
          INSERT INTO federation_retained_tools (${TOOL_COLUMNS})
          SELECT ${TOOL_COLUMNS} FROM federation_tools
          WHERE tenant_id = ${tenantId} AND upstream = ${name} AND (pinned_sha256 IS NOT NULL OR state = 'quarantined')
          ON CONFLICT (tenant_id, upstream, name) DO UPDATE SET
            state = excluded.state, reason = excluded.reason, markers = excluded.markers, pinned = excluded.pinned,
            pinned_sha256 = excluded.pinned_sha256, candidate = excluded.candidate, candidate_sha256 = excluded.candidate_sha256,
            first_seen_at = excluded.first_seen_at, updated_at = excluded.updated_at, approved_at = excluded.approved_at,
            approved_by = excluded.approved_by, retained_at = now()
          RETURNING name
        `.execute(tx);
        kept = rows.rows.length;
      }
      const meta = await tx.deleteFrom('federation_upstreams').where('tenant_id', '=', tenantId).where('name', '=', name).returning(META_COLUMNS).executeTakeFirst();
      return meta && { ...meta, kept };
    });
  }

  /** What the name keeps of a deleted upstream (all zero when nothing). */
  async retained(tenantId: string, name: string): Promise<RetainedTools> {
    const rows = await this.db.selectFrom('federation_retained_tools').select(['state', 'pinned_sha256']).where('tenant_id', '=', tenantId).where('upstream', '=', name).execute();
    return retainedOf(rows);
  }

  /** How many names of deleted upstreams keep tools, `except` one. */
  async retainedNames(tenantId: string, except: string): Promise<number> {
    const row = await this.db
      .selectFrom('federation_retained_tools')
      .select((eb) => eb.fn.count<string>('upstream').distinct().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('upstream', '<>', except)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Drops what the name keeps of a deleted upstream; how many tools that was. */
  async discardRetained(tenantId: string, name: string): Promise<number> {
    const r = await this.db.deleteFrom('federation_retained_tools').where('tenant_id', '=', tenantId).where('upstream', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async setStatus(tenantId: string, name: string, s: { status: string; status_reason: string | null; server_info?: Record<string, string> }): Promise<void> {
    await this.db
      .updateTable('federation_upstreams')
      .set({ status: s.status, status_reason: s.status_reason, refreshed_at: new Date(), ...(s.server_info ? { server_info: json(s.server_info) as never } : {}) })
      .where('tenant_id', '=', tenantId)
      .where('name', '=', name)
      .execute();
  }

  async setToolApproval(tenantId: string, mode: string, name?: string): Promise<void> {
    let q = this.db.updateTable('federation_upstreams').set({ tool_approval: mode }).where('tenant_id', '=', tenantId);
    if (name) q = q.where('name', '=', name);
    await q.execute();
  }

  tools(tenantId: string, upstream: string): Promise<ToolRow[]> {
    return this.db.selectFrom('federation_tools').selectAll().where('tenant_id', '=', tenantId).where('upstream', '=', upstream).orderBy('name').execute();
  }

  tool(tenantId: string, upstream: string, name: string): Promise<ToolRow | undefined> {
    return this.db.selectFrom('federation_tools').selectAll().where('tenant_id', '=', tenantId).where('upstream', '=', upstream).where('name', '=', name).executeTakeFirst();
  }

  /** Active tools of the tenant's connected upstreams, for tools/list. */
  activeTools(tenantId: string): Promise<Array<Pick<ToolRow, 'upstream' | 'name' | 'pinned'>>> {
    return this.db
      .selectFrom('federation_tools as t')
      .innerJoin('federation_upstreams as u', (j) => j.onRef('u.tenant_id', '=', 't.tenant_id').onRef('u.name', '=', 't.upstream'))
      .select(['t.upstream', 't.name', 't.pinned'])
      .where('t.tenant_id', '=', tenantId)
      .where('t.state', '=', 'active')
      .where('u.status', '=', 'connected')
      .orderBy('t.upstream')
      .orderBy('t.name')
      .execute();
  }

  async countsByState(tenantId: string): Promise<Map<string, { active: number; quarantined: number }>> {
    const rows = await this.db
      .selectFrom('federation_tools')
      .select(['upstream', 'state', (eb) => eb.fn.countAll<string>().as('n')])
      .where('tenant_id', '=', tenantId)
      .groupBy(['upstream', 'state'])
      .execute();
    const out = new Map<string, { active: number; quarantined: number }>();
    for (const r of rows) {
      const c = out.get(r.upstream) ?? { active: 0, quarantined: 0 };
      if (r.state === 'active') c.active = Number(r.n);
      if (r.state === 'quarantined') c.quarantined = Number(r.n);
      out.set(r.upstream, c);
    }
    return out;
  }

  /** Writes the tools of one sync in one transaction (insert or update each; untouched rows stay). */
  async writeTools(tenantId: string, upstream: string, tools: ToolWrite[]): Promise<void> {
    if (!tools.length) return;
    await this.db.transaction().execute(async (tx) => {
      for (const t of tools) {
        const values = {
          tenant_id: tenantId,
          upstream,
          name: t.name,
          state: t.state,
          reason: t.reason,
          markers: json(t.markers),
          pinned: t.pinned ? json(t.pinned) : null,
          pinned_sha256: t.pinned_sha256,
          candidate: t.candidate ? json(t.candidate) : null,
          candidate_sha256: t.candidate_sha256,
          updated_at: new Date(),
          ...(t.approved_at !== undefined ? { approved_at: t.approved_at, approved_by: t.approved_by ?? null } : {}),
        };
        const { tenant_id: _t, upstream: _u, name: _n, ...update } = values;
        await tx
          .insertInto('federation_tools')
          .values(values as never)
          .onConflict((oc) => oc.columns(['tenant_id', 'upstream', 'name']).doUpdateSet(update as never))
          .execute();
      }
    });
  }
}
