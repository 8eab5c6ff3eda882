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

  async insertGrant(g: Omit<GrantRow, 'created_at' | 'revoked_at'>): Promise<void> {
    await this.db.insertInto('oauth_grants').values(g).execute();
  }

  async insertCode(c: { code_hash: string; grant_id: string; client_id: string; redirect_uri: string; code_challenge: string; expires_at: Date }): Promise<void> {
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
      .select(['t.kind', 't.expires_at', 't.revoked_at', 'g.id', 'g.tenant_id', 'g.client_id', 'g.agent_name', 'g.scopes', 'g.resource', 'g.granted_by', 'g.created_at', 'g.revoked_at as grant_revoked_at'])
      .where('t.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { kind, expires_at, revoked_at, grant_revoked_at, ...g } = row;
    return { kind, expires_at: new Date(expires_at), revoked_at: revoked_at ? new Date(revoked_at) : null, grant: { ...g, revoked_at: grant_revoked_at } };
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
}
