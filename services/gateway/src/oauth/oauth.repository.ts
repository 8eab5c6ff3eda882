/**
 * The only queries of the MCP OAuth tables (docs/auth.md, "MCP clients: OAuth"): clients, authorization
 * requests waiting for consent, grants, codes and tokens. Codes and tokens are looked up by their SHA-256;
 * the values themselves are never stored.
 */
import type { Db } from '@agw/shared';
import type { Selectable } from 'kysely';
import type { Database } from '@agw/shared';

export type AuthorizationRequestRow = Selectable<Database['oauth_authorization_requests']>;
export type GrantRow = Selectable<Database['oauth_grants']>;

/** A live token with its grant (null when unknown, expired or revoked). */
export interface TokenGrant {
  kind: 'access' | 'refresh';
  expires_at: Date;
  revoked_at: Date | null;
  grant: GrantRow;
}

export class OauthRepository {
  constructor(private readonly db: Db) {}

  async insertClient(clientId: string, metadata: Record<string, unknown>): Promise<void> {
    await this.db.insertInto('oauth_clients').values({ client_id: clientId, metadata: JSON.stringify(metadata) as never }).execute();
  }

  async client(clientId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.db.selectFrom('oauth_clients').select('metadata').where('client_id', '=', clientId).executeTakeFirst();
    return row?.metadata;
  }

  async insertRequest(r: Omit<AuthorizationRequestRow, 'created_at' | 'decided_at'>): Promise<void> {
    await this.db.insertInto('oauth_authorization_requests').values(r).execute();
  }

  request(id: string): Promise<AuthorizationRequestRow | undefined> {
    return this.db.selectFrom('oauth_authorization_requests').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Marks a pending request decided, once: false when it was decided already or has expired. */
  async decide(id: string, now: Date): Promise<boolean> {
    const r = await this.db
      .updateTable('oauth_authorization_requests')
      .set({ decided_at: now })
      .where('id', '=', id)
      .where('decided_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Inserts the grant a user of its tenant consented to: false when `granted_by_user_id` is not (or no
   * longer) a user of that tenant. The grant goes with the user's row (ON DELETE CASCADE, migration 0032);
   * the user row is share-locked until the grant is in, so a removal cannot slip between check and insert.
   */
  async insertGrant(g: Omit<GrantRow, 'created_at' | 'revoked_at' | 'last_used_at' | 'granted_by_user_id'> & { granted_by_user_id: string }): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const user = await tx.selectFrom('users').select('id').where('tenant_id', '=', g.tenant_id).where('id', '=', g.granted_by_user_id).forKeyShare().executeTakeFirst();
      if (!user) return false;
      await tx.insertInto('oauth_grants').values(g).execute();
      return true;
    });
  }

  grant(id: string): Promise<GrantRow | undefined> {
    return this.db.selectFrom('oauth_grants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async insertCode(c: { code_hash: string; grant_id: string; client_id: string; redirect_uri: string; redirect_uri_sent: boolean; code_challenge: string; expires_at: Date }): Promise<void> {
    await this.db.insertInto('oauth_codes').values(c).execute();
  }

  code(codeHash: string) {
    return this.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
  }

  /** Uses a code once: the row when it was unused and live, else undefined. */
  async useCode(codeHash: string, now: Date) {
    return this.db
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
  }

  async insertTokens(grantId: string, tokens: Array<{ token_hash: string; kind: 'access' | 'refresh'; expires_at: Date }>): Promise<void> {
    await this.db
      .insertInto('oauth_tokens')
      .values(tokens.map((t) => ({ ...t, grant_id: grantId })))
      .execute();
  }

  async token(tokenHash: string): Promise<TokenGrant | undefined> {
    const row = await this.db
      .selectFrom('oauth_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .select(['t.kind', 't.expires_at', 't.revoked_at', 'g.id', 'g.tenant_id', 'g.client_id', 'g.agent_name', 'g.scopes', 'g.resource', 'g.granted_by', 'g.granted_by_user_id', 'g.created_at', 'g.revoked_at as grant_revoked_at', 'g.expires_at as grant_expires_at', 'g.last_used_at'])
      .where('t.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { kind, expires_at, revoked_at, grant_revoked_at, grant_expires_at, ...g } = row;
    return { kind, expires_at: new Date(expires_at), revoked_at: revoked_at ? new Date(revoked_at) : null, grant: { ...g, revoked_at: grant_revoked_at, expires_at: new Date(grant_expires_at) } };
  }

  /** Revokes one live token: false when it was revoked already (a refresh token used twice). */
  async revokeToken(tokenHash: string, now: Date): Promise<boolean> {
    const r = await this.db.updateTable('oauth_tokens').set({ revoked_at: now }).where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Revokes a grant and every token under it (a refresh token replayed: the whole family goes). */
  async revokeGrant(grantId: string, now: Date): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('oauth_grants').set({ revoked_at: now }).where('id', '=', grantId).where('revoked_at', 'is', null).execute();
      await tx.updateTable('oauth_tokens').set({ revoked_at: now }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
    });
  }

  /** Notes a use of the grant, at most once a minute (one UPDATE that does nothing within the minute). */
  async touchGrant(grantId: string, now: Date): Promise<void> {
    await this.db
      .updateTable('oauth_grants')
      .set({ last_used_at: now })
      .where('id', '=', grantId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(now.getTime() - 60_000))]))
      .execute();
  }

  /** The tenant's grants, newest first (revoked ones too), with the registered client's metadata when there is one. */
  async grants(tenantId: string) {
    return this.db
      .selectFrom('oauth_grants as g')
      .leftJoin('oauth_clients as c', 'c.client_id', 'g.client_id')
      .select(['g.id', 'g.client_id', 'g.agent_name', 'g.scopes', 'g.granted_by', 'g.created_at', 'g.last_used_at', 'g.expires_at', 'g.revoked_at', 'c.metadata'])
      .where('g.tenant_id', '=', tenantId)
      .orderBy('g.created_at', 'desc')
      .orderBy('g.id')
      .limit(1000)
      .execute();
  }

  /** Revokes one grant of the tenant and its tokens: its revoked_at (the first one when revoked already), undefined when not the tenant's. */
  async revokeTenantGrant(tenantId: string, grantId: string, now: Date): Promise<Date | undefined> {
    const g = await this.db.selectFrom('oauth_grants').select(['id', 'revoked_at']).where('id', '=', grantId).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (!g) return undefined;
    await this.revokeGrant(g.id, now);
    // a token issued in a race with the first revocation goes too
    const row = await this.db.selectFrom('oauth_grants').select('revoked_at').where('id', '=', grantId).executeTakeFirstOrThrow();
    return new Date(row.revoked_at ?? now);
  }

  /** Revokes every live grant of a tenant (key rotation), or those one user of it consented to: how many. */
  async revokeGrantsOf(tenantId: string, now: Date, grantedByUserId?: string): Promise<number> {
    return this.db.transaction().execute(async (tx) => {
      let q = tx.updateTable('oauth_grants').set({ revoked_at: now }).where('tenant_id', '=', tenantId).where('revoked_at', 'is', null);
      if (grantedByUserId !== undefined) q = q.where('granted_by_user_id', '=', grantedByUserId);
      const ids = (await q.returning('id').execute()).map((r) => r.id);
      if (ids.length) await tx.updateTable('oauth_tokens').set({ revoked_at: now }).where('grant_id', 'in', ids).where('revoked_at', 'is', null).execute();
      return ids.length;
    });
  }
}
