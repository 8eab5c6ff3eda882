/** The only queries on vault_credentials (sealed values, never plaintext). Tenant id first, always. */
import { randomUUID } from 'node:crypto';
import type { Database, Db } from '@agw/shared';
import type { Selectable } from 'kysely';
import type { SealedData } from '../hsm/hsm-backend';

type CredentialColumns = Selectable<Database['vault_credentials']>;

/** A credential's metadata, as its table type defines it (the sealed value excluded). */
export type CredentialMeta = Pick<CredentialColumns, 'tool_id' | 'name' | 'credential_type' | 'upstream_url' | 'upstream_method' | 'header_name' | 'key_id' | 'registered_at'>;

export interface CredentialRow extends CredentialMeta {
  sealed: SealedData;
}

const meta = ['tool_id', 'name', 'credential_type', 'upstream_url', 'upstream_method', 'header_name', 'key_id', 'registered_at'] as const;

export class CredentialRepository {
  constructor(private readonly db: Db) {}

  /** Insert or replace (same tool and name) a sealed credential. */
  async upsert(tenantId: string, c: Omit<CredentialRow, 'registered_at'>): Promise<CredentialMeta> {
    const now = new Date();
    return this.db
      .insertInto('vault_credentials')
      .values({ id: randomUUID(), tenant_id: tenantId, ...c, sealed: JSON.stringify(c.sealed), registered_at: now })
      .onConflict((oc) =>
        oc.columns(['tenant_id', 'tool_id', 'name']).doUpdateSet({
          credential_type: c.credential_type,
          upstream_url: c.upstream_url,
          upstream_method: c.upstream_method,
          header_name: c.header_name,
          key_id: c.key_id,
          sealed: JSON.stringify(c.sealed),
          registered_at: now,
        }),
      )
      .returning(meta)
      .executeTakeFirstOrThrow();
  }

  list(tenantId: string): Promise<CredentialMeta[]> {
    return this.db.selectFrom('vault_credentials').select(meta).where('tenant_id', '=', tenantId).orderBy('tool_id').orderBy('name').execute();
  }

  /** The credential the broker uses for a tool: the most recently registered one. */
  async forTool(tenantId: string, toolId: string): Promise<CredentialRow | undefined> {
    const row = await this.db
      .selectFrom('vault_credentials')
      .select([...meta, 'sealed'])
      .where('tenant_id', '=', tenantId)
      .where('tool_id', '=', toolId)
      .orderBy('registered_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? { ...row, sealed: row.sealed as unknown as SealedData } : undefined;
  }

  async delete(tenantId: string, toolId: string, name: string): Promise<CredentialMeta | undefined> {
    return this.db
      .deleteFrom('vault_credentials')
      .where('tenant_id', '=', tenantId)
      .where('tool_id', '=', toolId)
      .where('name', '=', name)
      .returning(meta)
      .executeTakeFirst();
  }
}
