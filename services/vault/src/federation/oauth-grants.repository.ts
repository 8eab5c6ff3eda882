/**
 * The only queries of upstream OAuth connections (docs/federation.md, "Upstreams that need OAuth"): the
 * sealed tokens of each connection (`federation_oauth_grants`, one per upstream and human, '' for the
 * shared one) and the authorizations started and not finished (`federation_oauth_pending`, single use).
 * Every method but `takePending` takes the tenant first and filters on it; a pending authorization is found
 * by the SHA-256 of its state alone (the callback knows no tenant) and names its tenant.
 */
import type { Database, Db } from '@agw/shared';
import { type Insertable, type Selectable, sql } from 'kysely';

export type GrantRow = Selectable<Database['federation_oauth_grants']>;
export type PendingRow = Selectable<Database['federation_oauth_pending']>;
/** a connection as the API shows it (never its tokens) */
export type GrantMeta = Omit<GrantRow, 'sealed' | 'key_id' | 'tenant_id'>;

export class OAuthGrantRepository {
  constructor(private readonly db: Db) {}

  grant(tenantId: string, upstream: string, userId: string): Promise<GrantRow | undefined> {
    return this.db.selectFrom('federation_oauth_grants').selectAll().where('tenant_id', '=', tenantId).where('upstream', '=', upstream).where('user_id', '=', userId).executeTakeFirst();
  }

  /** the connections of an upstream (or of all the tenant's upstreams), without their tokens */
  list(tenantId: string, upstream?: string): Promise<Array<GrantMeta>> {
    let q = this.db
      .selectFrom('federation_oauth_grants')
      .select(['upstream', 'user_id', 'scope', 'expires_at', 'connected_by', 'connected_at', 'refreshed_at'])
      .where('tenant_id', '=', tenantId);
    if (upstream) q = q.where('upstream', '=', upstream);
    return q.orderBy('upstream').orderBy('user_id').execute();
  }

  async save(tenantId: string, g: Omit<Insertable<Database['federation_oauth_grants']>, 'tenant_id' | 'sealed'> & { sealed: Record<string, string> }): Promise<void> {
    const row = { ...g, tenant_id: tenantId, sealed: JSON.stringify(g.sealed) };
    await this.db
      .insertInto('federation_oauth_grants')
      .values(row as never)
      .onConflict((oc) => oc.columns(['tenant_id', 'upstream', 'user_id']).doUpdateSet(row as never))
      .execute();
  }

  /**
   * Replaces a grant's tokens after a refresh, only if the row is still the one refreshed (`expected`: its
   * sealed text before): a concurrent refresh or a disconnect wins. True when written.
   */
  async rotate(tenantId: string, upstream: string, userId: string, expected: Record<string, string>, next: { sealed: Record<string, string>; expires_at: Date | null; scope: string | null }): Promise<boolean> {
    const r = await this.db
      .updateTable('federation_oauth_grants')
      .set({ sealed: JSON.stringify(next.sealed), expires_at: next.expires_at, scope: next.scope, refreshed_at: new Date() } as never)
      .where('tenant_id', '=', tenantId)
      .where('upstream', '=', upstream)
      .where('user_id', '=', userId)
      .where(sql<boolean>`sealed = ${JSON.stringify(expected)}::jsonb`)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Deletes a connection; the deleted row (for its revocation), or undefined. */
  remove(tenantId: string, upstream: string, userId: string): Promise<GrantRow | undefined> {
    return this.db.deleteFrom('federation_oauth_grants').where('tenant_id', '=', tenantId).where('upstream', '=', upstream).where('user_id', '=', userId).returningAll().executeTakeFirst();
  }

  async addPending(p: Omit<Insertable<Database['federation_oauth_pending']>, 'sealed'> & { sealed: Record<string, string> }): Promise<void> {
    await this.db.deleteFrom('federation_oauth_pending').where('expires_at', '<', new Date()).execute();
    await this.db
      .insertInto('federation_oauth_pending')
      .values({ ...p, sealed: JSON.stringify(p.sealed) } as never)
      .execute();
  }

  /** Reads and deletes a pending authorization in one statement: a state is used once, whatever follows. */
  takePending(stateSha256: string): Promise<PendingRow | undefined> {
    return this.db.deleteFrom('federation_oauth_pending').where('state_sha256', '=', stateSha256).returningAll().executeTakeFirst();
  }
}
