/** The only queries on vault_credential_access: one row per credential use. Tenant id first, always. */
import type { Database, Db } from '@agw/shared';
import type { Selectable } from 'kysely';

/** One credential use as recorded: the table's columns less the ones the repository fills in. */
export type AccessEntry = Omit<Selectable<Database['vault_credential_access']>, 'id' | 'tenant_id' | 'at'>;

export interface StoredAccessEntry extends AccessEntry {
  id: number;
  at: Date;
}

export class AccessLogRepository {
  constructor(private readonly db: Db) {}

  async append(tenantId: string, e: AccessEntry): Promise<void> {
    await this.db.insertInto('vault_credential_access').values({ tenant_id: tenantId, ...e }).execute();
  }

  list(tenantId: string, o: { limit: number; toolId?: string }): Promise<StoredAccessEntry[]> {
    let q = this.db
      .selectFrom('vault_credential_access')
      .select(['id', 'at', 'agent_id', 'tool_id', 'credential_name', 'action_id', 'origin', 'outcome', 'status_code', 'hsm_fetch_ms', 'execution_ms', 'error'])
      .where('tenant_id', '=', tenantId);
    if (o.toolId) q = q.where('tool_id', '=', o.toolId);
    return q.orderBy('id', 'desc').limit(o.limit).execute();
  }
}
