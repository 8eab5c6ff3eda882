/** The only queries on managed_agent_configs and managed_platform_resources. Tenant id first, always. */
import type { Database, Db } from '@agw/shared';
import type { Insertable, Selectable } from 'kysely';

export type AgentConfigRow = Selectable<Database['managed_agent_configs']>;
export type NewAgentConfig = Omit<Insertable<Database['managed_agent_configs']>, 'tenant_id' | 'allowed_tools' | 'require_human_approval' | 'governance_profile'> & {
  allowed_tools: string[];
  require_human_approval: string[];
  governance_profile: Record<string, unknown>;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids are uuids; anything else cannot exist (and must not reach Postgres as a uuid). */
export const isUuid = (s: string) => UUID.test(s);

export class AgentConfigRepository {
  constructor(private readonly db: Db) {}

  async insert(tenantId: string, c: NewAgentConfig): Promise<AgentConfigRow> {
    return this.db
      .insertInto('managed_agent_configs')
      .values({
        ...c,
        tenant_id: tenantId,
        allowed_tools: JSON.stringify(c.allowed_tools),
        require_human_approval: JSON.stringify(c.require_human_approval),
        governance_profile: JSON.stringify(c.governance_profile),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async get(tenantId: string, id: string): Promise<AgentConfigRow | undefined> {
    if (!isUuid(id)) return undefined;
    return this.db.selectFrom('managed_agent_configs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  }

  async list(tenantId: string): Promise<AgentConfigRow[]> {
    return this.db.selectFrom('managed_agent_configs').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'asc').execute();
  }

  /** The config and its ancestors, nearest first (the delegation chain). */
  async chain(tenantId: string, id: string): Promise<AgentConfigRow[]> {
    const out: AgentConfigRow[] = [];
    let next: string | null = id;
    while (next && out.length <= 16) {
      const row = await this.get(tenantId, next);
      if (!row) break;
      out.push(row);
      next = row.parent_agent_id;
    }
    return out;
  }

  async setPlatformAgent(tenantId: string, id: string, platformAgentId: string): Promise<void> {
    await this.db.updateTable('managed_agent_configs').set({ platform_agent_id: platformAgentId }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
  }

  /** Platform resources shared by the fleet (e.g. the default environment), keyed by name. */
  async resource(key: string): Promise<string | undefined> {
    return (await this.db.selectFrom('managed_platform_resources').select('platform_id').where('key', '=', key).executeTakeFirst())?.platform_id;
  }

  async putResource(key: string, platformId: string): Promise<void> {
    await this.db
      .insertInto('managed_platform_resources')
      .values({ key, platform_id: platformId })
      .onConflict((oc) => oc.column('key').doUpdateSet({ platform_id: platformId, created_at: new Date() }))
      .execute();
  }
}
