import { type Kysely, sql } from 'kysely';

/**
 * A grant ends with the user who consented (docs/auth.md, "MCP clients: OAuth 2.1", "What ends a grant";
 * issue 42, item 5): `oauth_grants.granted_by_user_id` names the signed-in user whose consent made the grant,
 * and the grant goes with that user's row (`ON DELETE CASCADE`; its codes and tokens go with the grant), by
 * whatever path the user is removed. `granted_by` keeps the e-mail the grants list shows.
 *
 * Grants made before this migration are linked by their `granted_by` e-mail within the tenant; one that names
 * no user of its tenant stays unlinked (null) and ends by its lifetime, revocation or key rotation.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE oauth_grants ADD COLUMN granted_by_user_id uuid REFERENCES users (id) ON DELETE CASCADE;
    UPDATE oauth_grants g SET granted_by_user_id = u.id FROM users u WHERE u.tenant_id = g.tenant_id AND u.email = g.granted_by;
    CREATE INDEX oauth_grants_granted_by_user ON oauth_grants (granted_by_user_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX oauth_grants_granted_by_user;
    ALTER TABLE oauth_grants DROP COLUMN granted_by_user_id;
  `.execute(db);
}
