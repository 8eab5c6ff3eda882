/**
 * Backups are restorable: a tenant's backup and a whole-database backup (packages/shared/src/db/backup.ts,
 * what POST /api/backup/trigger writes) are restored into an empty database with the PostgreSQL client
 * tools, and the restored hash chains verify with the audit service's own verification (AuditChain.verify).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Db, TEST_DATABASE_URL, createBackup, createDb, ensureDatabase, migrateToLatest, openTestDb, restoreBackup } from '@agw/shared';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { AuditChain } from '../src/chain/audit-chain';
import { governedEntry } from './support/entries';
const dir = mkdtempSync(path.join(tmpdir(), 'agw-backup-'));
const restoredUrls: string[] = [];
let db: Db;
let chain: AuditChain;

/** a fresh, empty database beside the test database */
async function emptyDatabase(): Promise<string> {
  const u = new URL(TEST_DATABASE_URL);
  u.pathname = `/agw_restore_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await ensureDatabase(u.toString());
  restoredUrls.push(u.toString());
  return u.toString();
}

async function tenantWithChain(records: number): Promise<string> {
  const t = randomUUID();
  await db.insertInto('tenants').values({ id: t, slug: `backup-${t}`, name: 'Backup test' } as never).execute();
  for (let i = 0; i < records; i++) await chain.append(t, governedEntry({ params: { i, note: `record ${i} of ${t}` } }));
  return t;
}

beforeAll(async () => {
  db = await openTestDb();
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
});
afterAll(async () => {
  await db.destroy();
  const admin = createDb(TEST_DATABASE_URL.replace(/\/[^/]*$/, '/postgres'));
  for (const u of restoredUrls) await sql.raw(`DROP DATABASE IF EXISTS "${new URL(u).pathname.slice(1)}" WITH (FORCE)`).execute(admin);
  await admin.destroy();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

jest.setTimeout(60_000);

describe('backups', () => {
  it("a tenant's backup holds its rows only and restores into an empty database where its chain verifies", async () => {
    const mine = await tenantWithChain(7);
    const other = await tenantWithChain(3);
    const b = await createBackup({ databaseUrl: TEST_DATABASE_URL, dir, tenantId: mine });
    expect(b).toMatchObject({ scope: 'tenant', tenant_id: mine, format: 'sql' });
    expect(b.rows).toMatchObject({ audit_records: 7, audit_chain_heads: 1, tenants: 1 });
    const bytes = readFileSync(b.path);
    expect(bytes.length).toBe(b.size_bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(b.sha256);
    expect(bytes.toString()).not.toContain(other);
    expect(JSON.parse(readFileSync(`${b.path}.json`, 'utf8'))).toMatchObject({ backup_id: b.backup_id, sha256: b.sha256 });

    const target = await emptyDatabase();
    await restoreBackup({ file: b.path, databaseUrl: target });
    const restored = createDb(target);
    try {
      const restoredChain = new AuditChain(new AuditRecordRepository(restored), { tamperDemo: false });
      expect(await restoredChain.verify(mine)).toEqual({ valid: true, record_count: 7 });
      expect(await restoredChain.verify(other)).toEqual({ valid: true, record_count: 0 });
      // the restored database is usable: the chain goes on from its head, the schema is at the latest migration
      await restoredChain.append(mine, governedEntry({ params: { after: 'restore' } }));
      expect(await restoredChain.verify(mine)).toEqual({ valid: true, record_count: 8 });
      expect(await migrateToLatest(target)).toEqual([]);
    } finally {
      await restored.destroy();
    }
  });

  it('a whole-database backup restores every tenant, and each chain verifies', async () => {
    const a = await tenantWithChain(4);
    const c = await tenantWithChain(5);
    const b = await createBackup({ databaseUrl: TEST_DATABASE_URL, dir });
    expect(b).toMatchObject({ scope: 'database', tenant_id: null, format: 'custom' });
    const target = await emptyDatabase();
    await restoreBackup({ file: b.path, databaseUrl: target });
    const restored = createDb(target);
    try {
      const restoredChain = new AuditChain(new AuditRecordRepository(restored), { tamperDemo: false });
      expect(await restoredChain.verify(a)).toEqual({ valid: true, record_count: 4 });
      expect(await restoredChain.verify(c)).toEqual({ valid: true, record_count: 5 });
    } finally {
      await restored.destroy();
    }
  });

  it('refuses a tenant id that is not a UUID (never reaches a command line)', async () => {
    await expect(createBackup({ databaseUrl: TEST_DATABASE_URL, dir, tenantId: "x'; DROP TABLE tenants; --" })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
