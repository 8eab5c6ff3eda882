/**
 * Backups restore whatever order their rows come in. `managed_agent_configs` references itself
 * (`parent_agent_id`, the delegation tree), so `pg_dump --data-only` warns "there are circular foreign-key
 * constraints on this table … You might not be able to restore the dump without using --disable-triggers".
 * Neither kind of backup is a data-only dump: both load every row before the constraints exist (the tenant
 * file: pre-data, rows, post-data; the whole database: pg_dump's custom format, whose foreign keys are in
 * post-data), so the foreign keys are created, and checked, after the rows are in, in any order
 * (docs/reliability.md, "Restore drill"). Here a delegate is stored physically before its parent, and both
 * kinds restore with ON_ERROR_STOP / --exit-on-error and nothing disabled.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createBackup, restoreBackup } from '../src/db/backup';
import { type Db, createDb } from '../src/db/database';
import { ensureDatabase, migrateToLatest } from '../src/db/migrate';
import { TEST_DATABASE_URL } from '../src/test-stores';

const base = new URL(TEST_DATABASE_URL);
const dir = mkdtempSync(path.join(tmpdir(), 'agw-backup-order-'));
const databases: string[] = [];

function scratchUrl(): string {
  const u = new URL(base.toString());
  u.pathname = `/agw_backup_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  databases.push(u.pathname.slice(1));
  return u.toString();
}

const source = scratchUrl();
let db: Db;
const tenant = randomUUID();
const parent = randomUUID();
const child = randomUUID();

jest.setTimeout(60_000);

beforeAll(async () => {
  await migrateToLatest(source);
  db = createDb(source, { max: 2 });
  await sql`INSERT INTO tenants (id, slug, name) VALUES (${tenant}, ${`order-${tenant}`}, 'Backup order')`.execute(db);
  const config = (id: string, parentId: string | null, depth: number) =>
    sql`INSERT INTO managed_agent_configs (id, tenant_id, name, anthropic_model, max_delegation_depth, parent_agent_id, depth) VALUES (${id}, ${tenant}, ${`agent-${depth}`}, 'model', 2, ${parentId}, ${depth})`.execute(db);
  await config(parent, null, 0);
  await config(child, parent, 1);
  // an update writes the parent's row anew after the child's: the table now holds the delegate first
  await sql`UPDATE managed_agent_configs SET name = 'agent-root' WHERE id = ${parent}`.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  const admin = createDb(Object.assign(new URL(base.toString()), { pathname: '/postgres' }).toString(), { max: 1 });
  for (const name of databases) await sql.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).execute(admin);
  await admin.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** The tenant's agent configs restored from `file` into a fresh database, parents first. */
async function restoredConfigs(file: string): Promise<Array<{ id: string; parent_agent_id: string | null }>> {
  const target = scratchUrl();
  await ensureDatabase(target);
  await restoreBackup({ file, databaseUrl: target });
  const r = createDb(target, { max: 1 });
  try {
    return (await sql<{ id: string; parent_agent_id: string | null }>`SELECT id, parent_agent_id FROM managed_agent_configs WHERE tenant_id = ${tenant} ORDER BY depth`.execute(r)).rows;
  } finally {
    await r.destroy();
  }
}

describe('backups of a self-referencing table', () => {
  it('the delegate is stored before its parent, and a data-only dump warns about it', async () => {
    const order = await sql<{ id: string }>`SELECT id FROM managed_agent_configs WHERE tenant_id = ${tenant} ORDER BY ctid`.execute(db);
    expect(order.rows.map((r) => r.id)).toEqual([child, parent]);
    // the caveat is pg_dump's, for the data-only form: what neither backup is
    const dataOnly = spawnSync('pg_dump', ['--data-only', '--table=managed_agent_configs', '--dbname', source], { encoding: 'utf8' });
    expect(dataOnly.status).toBe(0);
    expect(dataOnly.stderr).toContain('circular foreign-key constraints on this table');
  });

  it("a tenant's backup restores with psql ON_ERROR_STOP, constraints checked after the rows", async () => {
    const b = await createBackup({ databaseUrl: source, dir, tenantId: tenant });
    expect(b.rows).toMatchObject({ managed_agent_configs: 2 });
    expect(await restoredConfigs(b.path)).toEqual([
      { id: parent, parent_agent_id: null },
      { id: child, parent_agent_id: parent },
    ]);
  });

  it('a whole-database backup restores with pg_restore --exit-on-error, without --disable-triggers', async () => {
    const b = await createBackup({ databaseUrl: source, dir });
    expect(b.restore_command).not.toContain('disable-triggers');
    // the archive creates the foreign keys after the data (post-data)
    const list = execFileSync('pg_restore', ['--list', b.path], { encoding: 'utf8' }).split('\n');
    const at = (pattern: RegExp) => list.findIndex((l) => pattern.test(l));
    expect(at(/TABLE DATA public managed_agent_configs /)).toBeGreaterThan(0);
    expect(at(/FK CONSTRAINT public managed_agent_configs managed_agent_configs_parent_agent_id_fkey/)).toBeGreaterThan(at(/TABLE DATA public managed_agent_configs /));
    expect(await restoredConfigs(b.path)).toEqual([
      { id: parent, parent_agent_id: null },
      { id: child, parent_agent_id: parent },
    ]);
  });
});
