import { type Kysely, sql } from 'kysely';
import { applyFunctions, auditAppendBatch, auditAppendOne } from '../functions';

/**
 * The chain's append functions from their one definition in code (`db/functions/audit-append.sql.ts`), no
 * longer from the text of the newest migration that redefined them (0027 for `audit_append_batch`, 0029 for
 * `audit_append_one`: the same SQL, so the records and hashes they write are the same). A later change to a
 * registered function is applied by a migration of its own that calls `applyFunctions` again.
 *
 * Drops `audit_append` (migration 0008): the one-record function that nothing has called since the group
 * commit (`audit_append_batch`, migration 0011), and the last writer of records outside the registered ones.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await applyFunctions(db, [auditAppendOne, auditAppendBatch]);
  await sql`DROP FUNCTION IF EXISTS audit_append`.execute(db);
}
