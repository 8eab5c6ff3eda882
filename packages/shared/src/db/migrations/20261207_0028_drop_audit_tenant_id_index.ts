import { type Kysely, sql } from 'kysely';

/**
 * `audit_records_tenant_id_idx` (tenant_id, id) goes (issue 26: the cost of an append). Every query on a
 * tenant's records reads them in chain order (`tenant_seq`) or by action, hash, session or append key, each
 * with an index of its own; one that filters by tenant alone is served as well by the unique index
 * (tenant_id, tenant_seq), which covers the same rows in the same order (a tenant's `id` and `tenant_seq`
 * both grow with each append under the tenant's head-row lock). It was one more B-tree insert per governed
 * call, as `policy_decisions_agent_idx` was (migration 0026).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS audit_records_tenant_id_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS audit_records_tenant_id_idx ON audit_records (tenant_id, id)`.execute(db);
}
