/**
 * The only queries of the federation catalog (docs/federation.md): a tenant's upstream MCP servers and the
 * tools seen on each, with their pinned and candidate definitions. Every method takes the tenant id first
 * and filters on it. The sealed credential is read only by `forConnection` (the connector's path).
 */
import type { Database, Db } from '@agw/shared';
import type { Insertable, Selectable } from 'kysely';

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
] as const;

/** jsonb columns take their JSON text */
const json = (v: unknown) => JSON.stringify(v);

export class UpstreamRepository {
  constructor(private readonly db: Db) {}

  /** undefined when the name is taken for this tenant. */
  async insert(tenantId: string, u: NewUpstream): Promise<UpstreamMeta | undefined> {
    return this.db
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

  /** One round trip for a governed call: the upstream (with its sealed credential) and the called tool's state. */
  forCall(tenantId: string, name: string, tool: string): Promise<(UpstreamRow & { tool_state: string | null; tool_reason: string | null }) | undefined> {
    return this.db
      .selectFrom('federation_upstreams as u')
      .leftJoin('federation_tools as t', (j) => j.onRef('t.tenant_id', '=', 'u.tenant_id').onRef('t.upstream', '=', 'u.name').on('t.name', '=', tool))
      .selectAll('u')
      .select(['t.state as tool_state', 't.reason as tool_reason'])
      .where('u.tenant_id', '=', tenantId)
      .where('u.name', '=', name)
      .executeTakeFirst();
  }

  delete(tenantId: string, name: string): Promise<UpstreamMeta | undefined> {
    return this.db.deleteFrom('federation_upstreams').where('tenant_id', '=', tenantId).where('name', '=', name).returning(META_COLUMNS).executeTakeFirst();
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
