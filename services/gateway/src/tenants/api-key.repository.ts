/** Queries on api_keys: only hashes are stored. */
import type { Db } from '@agw/shared';

export class ApiKeyRepository {
  constructor(private readonly db: Db) {}

  /** The active key row with this hash, if any. */
  /** Who issued an active key of the tenant (`user:<email>`, `api_key:<prefix>`, or null for a sign-up or rotation key). */
  async issuerOf(tenantId: string, keyHash: string): Promise<string | null> {
    const row = await this.db.selectFrom('api_keys').select('created_by').where('tenant_id', '=', tenantId).where('key_hash', '=', keyHash).where('revoked_at', 'is', null).executeTakeFirst();
    return row?.created_by ?? null;
  }

  findActiveByHash(keyHash: string): Promise<{ tenant_id: string; key_hash: string; key_prefix: string; scope: 'tenant' | 'agent' } | undefined> {
    return this.db
      .selectFrom('api_keys')
      .select(['tenant_id', 'key_hash', 'key_prefix', 'scope'])
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }

  /** Revoke every active tenant-scoped key of the tenant and insert the new one, atomically; returns the revoked hashes. */
  async rotate(tenantId: string, next: { id: string; keyHash: string; keyPrefix: string }): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('api_keys')
        .set({ revoked_at: new Date() })
        .where('tenant_id', '=', tenantId)
        .where('scope', '=', 'tenant')
        .where('revoked_at', 'is', null)
        .returning('key_hash')
        .execute();
      await trx.insertInto('api_keys').values({ id: next.id, tenant_id: tenantId, key_hash: next.keyHash, key_prefix: next.keyPrefix }).execute();
      return revoked.map((r) => r.key_hash);
    });
  }

  async insert(tenantId: string, k: { id: string; keyHash: string; keyPrefix: string; scope: 'tenant' | 'agent' }, name: string, createdBy: string): Promise<Date> {
    const row = await this.db
      .insertInto('api_keys')
      .values({ id: k.id, tenant_id: tenantId, key_hash: k.keyHash, key_prefix: k.keyPrefix, scope: k.scope, name, created_by: createdBy })
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return row.created_at;
  }

  /** The tenant's active keys, newest first (prefixes only: the keys are never stored). */
  list(tenantId: string) {
    return this.db
      .selectFrom('api_keys')
      .select(['id', 'key_prefix', 'scope', 'name', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .limit(1000)
      .execute();
  }

  /**
   * Revoke an active agent key of the tenant. undefined: no such key of this tenant; `revoked: false`:
   * the key exists but is the tenant key or already revoked (`scope`, `revoked_at` say which).
   */
  async revoke(tenantId: string, id: string): Promise<{ revoked: boolean; key_hash: string; scope: string; revoked_at: Date | null } | undefined> {
    const done = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('scope', '=', 'agent')
      .where('revoked_at', 'is', null)
      .returning(['key_hash', 'scope', 'revoked_at'])
      .executeTakeFirst();
    if (done) return { revoked: true, ...done };
    const row = await this.db.selectFrom('api_keys').select(['key_hash', 'scope', 'revoked_at']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return row ? { revoked: false, ...row } : undefined;
  }

  activePrefix(tenantId: string): Promise<string | undefined> {
    return this.db
      .selectFrom('api_keys')
      .select('key_prefix')
      .where('tenant_id', '=', tenantId)
      .where('scope', '=', 'tenant')
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
      .then((r) => r?.key_prefix);
  }
}
