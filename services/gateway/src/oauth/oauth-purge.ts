/**
 * The periodic purge of the MCP OAuth tables (docs/auth.md, "MCP clients: OAuth 2.1", "Purge"): one replica
 * at a time (a transaction-scoped Postgres advisory lock, tried: a replica that does not get it skips the
 * round) deletes
 * - authorization requests past their expiry, and decided ones 10 minutes after the decision;
 * - authorization codes past their expiry (a used code is kept until then: its replay revokes the grant);
 * - tokens expired more than a day ago; revoked access tokens a day after revocation; revoked refresh
 *   tokens a day after revocation once their grant has ended (a consumed refresh token of a live grant is
 *   kept until it expires: its replay revokes the grant);
 * - dynamically registered clients older than 7 days that no grant names (a client that registered and
 *   never got consent).
 * Grants themselves stay (GET /api/oauth/grants lists revoked and expired ones).
 */
import { type Db, type Logger } from '@agw/shared';
import { sql } from 'kysely';
import { PeriodicSweep } from '../periodic-sweep';

const DAY = 86400_000;

export interface PurgeCounts {
  requests: number;
  codes: number;
  tokens: number;
  clients: number;
}

export async function purgeOauth(db: Db, now = new Date()): Promise<PurgeCounts | undefined> {
  return db.transaction().execute(async (tx) => {
    const lock = await sql<{ got: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext('agw:oauth-purge')) AS got`.execute(tx);
    if (!lock.rows[0]?.got) return undefined;
    const dayAgo = new Date(now.getTime() - DAY);
    const requests = await tx
      .deleteFrom('oauth_authorization_requests')
      .where((eb) => eb.or([eb('expires_at', '<', now), eb('decided_at', '<', new Date(now.getTime() - 10 * 60_000))]))
      .executeTakeFirst();
    const codes = await tx.deleteFrom('oauth_codes').where('expires_at', '<', now).executeTakeFirst();
    const tokens = await tx
      .deleteFrom('oauth_tokens')
      .where((eb) =>
        eb.or([
          eb('expires_at', '<', dayAgo),
          eb.and([eb('revoked_at', '<', dayAgo), eb('kind', '=', 'access')]),
          eb.and([
            eb('revoked_at', '<', dayAgo),
            eb('grant_id', 'in', eb.selectFrom('oauth_grants').select('id').where((g) => g.or([g('revoked_at', 'is not', null), g('expires_at', '<', now)]))),
          ]),
        ]),
      )
      .executeTakeFirst();
    const clients = await tx
      .deleteFrom('oauth_clients')
      .where('created_at', '<', new Date(now.getTime() - 7 * DAY))
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('oauth_grants as g').select('g.id').whereRef('g.client_id', '=', 'oauth_clients.client_id'))))
      .executeTakeFirst();
    return { requests: Number(requests.numDeletedRows), codes: Number(codes.numDeletedRows), tokens: Number(tokens.numDeletedRows), clients: Number(clients.numDeletedRows) };
  });
}

/** Runs purgeOauth every `everyMs` (0: never). */
export class OauthPurge {
  private readonly periodic: PeriodicSweep;

  constructor(db: Db, logger: Logger) {
    this.periodic = new PeriodicSweep(
      'OAuth purge',
      async () => {
        const c = await purgeOauth(db);
        if (c && (c.requests || c.codes || c.tokens || c.clients)) logger.info(c, 'OAuth tables purged');
      },
      logger,
    );
  }

  start(everyMs: number): void {
    this.periodic.start(everyMs);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
