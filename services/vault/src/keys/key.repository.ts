/** The only queries on vault_keys (labels and lifecycle of HSM keys; never key material). Tenant id first. */
import type { Db } from '@agw/shared';
import { sql } from 'kysely';

export interface KeyRow {
  key_id: string;
  purpose: string;
  subject_id: string | null;
  backend: string;
  created_at: Date;
  destroyed_at: Date | null;
}

export class KeyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Run `fn` while holding a Postgres advisory lock on the key label, so replicas never generate two
   * HSM objects under one label.
   */
  async withLabelLock<T>(tenantId: string, keyId: string, fn: (locked: KeyRepository) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`vault-key:${tenantId}:${keyId}`}, 0))`.execute(trx);
      return fn(new KeyRepository(trx));
    });
  }

  async register(tenantId: string, key: { key_id: string; purpose: string; subject_id: string | null; backend: string }): Promise<void> {
    await this.db
      .insertInto('vault_keys')
      .values({ tenant_id: tenantId, ...key })
      .onConflict((oc) => oc.columns(['tenant_id', 'key_id']).doNothing())
      .execute();
  }

  async get(tenantId: string, keyId: string): Promise<KeyRow | undefined> {
    return this.db
      .selectFrom('vault_keys')
      .select(['key_id', 'purpose', 'subject_id', 'backend', 'created_at', 'destroyed_at'])
      .where('tenant_id', '=', tenantId)
      .where('key_id', '=', keyId)
      .executeTakeFirst();
  }

  async list(tenantId: string, limit = 1000): Promise<KeyRow[]> {
    return this.db
      .selectFrom('vault_keys')
      .select(['key_id', 'purpose', 'subject_id', 'backend', 'created_at', 'destroyed_at'])
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
  }

  async markDestroyed(tenantId: string, keyId: string): Promise<void> {
    await this.db
      .updateTable('vault_keys')
      .set({ destroyed_at: new Date() })
      .where('tenant_id', '=', tenantId)
      .where('key_id', '=', keyId)
      .where('destroyed_at', 'is', null)
      .execute();
  }
}
