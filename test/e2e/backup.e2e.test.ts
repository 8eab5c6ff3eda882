/**
 * POST /api/backup/trigger through the fleet: a tenant gets a restorable backup of its own rows (never another
 * tenant's), an administrator the whole database, at most 2 per minute. The restored tenant backup holds the
 * tenant's chain as the fleet answers it (the chain verification of restored backups: services/audit/test/
 * backup-restore.int.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createDb, ensureDatabase, restoreBackup } from '@agw/shared';
import { api, call, newTenant } from './support/api';
import { E2E_DATABASE_URL } from './support/e2e-env';

const restored: string[] = [];
afterAll(() => {
  const admin = E2E_DATABASE_URL.replace(/\/[^/]*$/, '/postgres');
  for (const name of restored) execFileSync('psql', ['-X', '-q', admin, '-c', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`]);
}, 60_000);

async function emptyDatabase(): Promise<string> {
  const name = `agw_restore_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = E2E_DATABASE_URL.replace(/\/[^/]*$/, `/${name}`);
  await ensureDatabase(url);
  restored.push(name);
  return url;
}

describe('POST /api/backup/trigger', () => {
  it("writes a restorable backup of the caller's rows only, at most 2 per minute", async () => {
    const a = await newTenant('Backup A');
    const b = await newTenant('Backup B');
    for (let i = 0; i < 3; i++) expect((await call(a.apiKey, { params: { q: `a${i}` } })).status).toBe(200);
    expect((await call(b.apiKey)).status).toBe(200);

    const first = await api('POST', '/backup/trigger', { key: a.apiKey });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'completed', scope: 'tenant', tenant_id: a.tenantId, format: 'sql' });
    expect(first.body.rows).toMatchObject({ audit_records: 3, tenants: 1 });
    const bytes = readFileSync(first.body.path);
    expect(bytes.length).toBe(first.body.size_bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(first.body.sha256);
    expect(bytes.toString()).not.toContain(b.tenantId);

    expect((await api('POST', '/backup/trigger', { key: a.apiKey })).status).toBe(200);
    const third = await api('POST', '/backup/trigger', { key: a.apiKey });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    // the limit is the tenant's own
    expect((await api('POST', '/backup/trigger', { key: b.apiKey })).status).toBe(200);
    expect((await api('POST', '/backup/trigger')).status).toBe(401);

    // restored into an empty database: the tenant's records, in chain order, as the fleet lists them
    const target = await emptyDatabase();
    await restoreBackup({ file: first.body.path, databaseUrl: target });
    const db = createDb(target);
    try {
      const rows = await db.selectFrom('audit_records').select(['action_id', 'tenant_id', 'record_hash']).orderBy('tenant_seq').execute();
      const log = await api('GET', '/audit/log?limit=100', { key: a.apiKey });
      const listed = log.body.records as Array<{ action_id: string }>;
      expect(rows.every((r) => r.tenant_id === a.tenantId)).toBe(true);
      expect(rows.map((r) => r.action_id).sort()).toEqual(listed.map((r) => r.action_id).sort());
      const head = await db.selectFrom('audit_chain_heads').selectAll().execute();
      expect(head).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  });

  it('gives an administrator the whole database (pg_dump custom format)', async () => {
    const email = 'admin@e2e.test';
    const password = 'correct-horse-battery-staple';
    const signup = await api('POST', '/auth/signup', { body: { email, password, tenant_name: 'E2E Admin' } });
    expect([201, 409]).toContain(signup.status);
    const login = await api('POST', '/auth/login', { body: { email, password } });
    expect(login.status).toBe(200);
    const r = await api('POST', '/backup/trigger', { token: login.body.access_token });
    if (r.status === 429) return; // a previous run within the minute: the limit itself is tested above
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ scope: 'database', tenant_id: null, format: 'custom' });
    expect(readFileSync(r.body.path).subarray(0, 5).toString()).toBe('PGDMP');
  });
});
