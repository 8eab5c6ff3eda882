/** Queries on api_keys: only hashes are stored. */
import type { Db } from '@agw/shared';

export class ApiKeyRepository {
  constructor(private readonly db: Db) {}

  /** The active key row with this hash, if any. */
  findActiveByHash(keyHash: string): Promise<{ tenant_id: string; key_hash: string } | undefined> {
    return this.db
      .selectFrom('api_keys')
      .select(['tenant_id', 'key_hash'])
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }

  /** Revoke every active key of the tenant and insert the new one, atomically; returns the revoked hashes. */
  async rotate(tenantId: string, next: { id: string; keyHash: string; keyPrefix: string }): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('api_keys')
        .set({ revoked_at: new Date() })
        .where('tenant_id', '=', tenantId)
        .where('revoked_at', 'is', null)
        .returning('key_hash')
        .execute();
      await trx.insertInto('api_keys').values({ id: next.id, tenant_id: tenantId, key_hash: next.keyHash, key_prefix: next.keyPrefix }).execute();
      return revoked.map((r) => r.key_hash);
    });
  }

  activePrefix(tenantId: string): Promise<string | undefined> {
    return this.db
      .selectFrom('api_keys')
      .select('key_prefix')
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
      .then((r) => r?.key_prefix);
  }
}
