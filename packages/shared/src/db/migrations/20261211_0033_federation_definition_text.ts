import { type Kysely, sql } from 'kysely';

/**
 * Federated tool definitions keep the upstream's key order (docs/federation.md, "Pinned definitions";
 * issue 43, item 4). `jsonb` stores an object's keys sorted (shorter keys first), so a definition read
 * back listed `inputSchema.properties` (and every other object) in another order than the upstream
 * wrote it. `json` keeps the text as written: the pinned and candidate definitions of `federation_tools`
 * and `federation_retained_tools` become `json`.
 *
 * Existing rows are converted as they are (their text is jsonb's order, which cannot be undone here);
 * the next read of each upstream stores the definitions it offers unchanged (same fingerprint) as the
 * upstream writes them. The fingerprints (SHA-256 of the RFC 8785 canonical JSON, where key order does
 * not count) stay what they were. Nothing compares, indexes or groups these columns (json has no
 * equality), and only the vault reads them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['federation_tools', 'federation_retained_tools']) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN pinned TYPE json USING pinned::json, ALTER COLUMN candidate TYPE json USING candidate::json`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['federation_tools', 'federation_retained_tools']) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN pinned TYPE jsonb USING pinned::jsonb, ALTER COLUMN candidate TYPE jsonb USING candidate::jsonb`.execute(db);
  }
}
