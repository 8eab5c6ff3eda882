/**
 * Backups with the PostgreSQL client tools (docs/operations.md, "Backups"): `POST /api/backup/trigger`
 * writes one file into BACKUP_DIR and answers with its id, path, size and SHA-256.
 *
 * - scope `database` (an administrator): `pg_dump --format=custom` of the whole database, restored with
 *   `pg_restore --no-owner -d <empty database> <file>`.
 * - scope `tenant` (any other caller): a plain SQL file holding the whole schema (pg_dump pre-data and
 *   post-data sections) and only the calling tenant's rows: its row of `tenants`, every row of a table with
 *   a `tenant_id` column that is the tenant's, the anchor batches that anchor its tree heads (their roots are
 *   public on chain), the chain's contract addresses and the migration bookkeeping. The rows are read in one
 *   REPEATABLE READ transaction, so the file is one consistent snapshot (a chain head and its records
 *   agree). Restored with `psql -X -v ON_ERROR_STOP=1 --single-transaction -f <file> <empty database>`.
 *   Tables of no tenant (the transient event outbox, the platform's resource ids) are left out.
 *
 * The tools must be at least the server's major version (pg_dump refuses older servers' newer formats):
 * checked before each backup, reported in the result.
 *
 * Row order does not matter to either kind, and neither needs `--disable-triggers`: both load every row
 * before any foreign key exists (the tenant file is pre-data, then the rows, then post-data, where pg_dump
 * puts the constraints; the custom archive restores its FK constraints in post-data too), so the keys are
 * created, and checked, once the rows are in. pg_dump's warning "circular foreign-key constraints on this
 * table: managed_agent_configs" (its self-reference, `parent_agent_id`) concerns `--data-only` dumps, which
 * no backup is (test/backup.int.test.ts; docs/reliability.md, "Restore drill").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { DependencyUnavailableError, InputError } from '../errors';

export type BackupScope = 'tenant' | 'database';

export interface BackupResult {
  backup_id: string;
  scope: BackupScope;
  tenant_id: string | null;
  /** `sql`: plain SQL for psql; `custom`: pg_dump's archive format for pg_restore */
  format: 'sql' | 'custom';
  file: string;
  path: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
  duration_ms: number;
  pg_dump_version: string;
  server_version: string;
  /** tenant scope: rows written per table */
  rows?: Record<string, number>;
  restore_command: string;
}

export interface BackupOptions {
  databaseUrl: string;
  dir: string;
  /** a tenant's rows only; absent: the whole database */
  tenantId?: string;
  /** directory of pg_dump/psql (default: from PATH) */
  binDir?: string;
  timeoutMs?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDENT = /^[a-z_][a-z0-9_]*$/;
/** tables copied whole into a tenant's backup: no tenant data, needed to use the restored database */
const WHOLE_TABLES = new Set(['anchor_contracts', 'kysely_migration', 'kysely_migration_lock']);

/** The URL without its password (which goes to PGPASSWORD, never onto a command line) and the tools' env. */
function connection(databaseUrl: string): { url: string; env: NodeJS.ProcessEnv } {
  const u = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (u.password) {
    env.PGPASSWORD = decodeURIComponent(u.password);
    u.password = '';
  }
  return { url: u.toString(), env };
}

const tool = (binDir: string | undefined, name: string) => (binDir ? path.join(binDir, name) : name);

/** Run a client tool; stdout to `out` (a file stream) or collected; rejects with its stderr. */
function run(cmd: string, args: string[], o: { env: NodeJS.ProcessEnv; out?: NodeJS.WritableStream; stdin?: string; timeoutMs?: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(cmd, args, { env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      reject(e);
      return;
    }
    let stdout = '';
    let stderr = '';
    if (o.out) child.stdout!.pipe(o.out, { end: false });
    else child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
    const timer = o.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), o.timeoutMs) : undefined;
    child.on('error', (e) => {
      clearTimeout(timer);
      reject((e as { code?: string }).code === 'ENOENT' ? new DependencyUnavailableError(`${cmd} is not installed (the PostgreSQL client tools are needed for backups)`) : e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new DependencyUnavailableError(`${path.basename(cmd)} failed (${signal ?? `exit ${code}`}): ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
    child.stdin!.end(o.stdin ?? '');
  });
}

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

const major = (version: string) => Number(/(\d+)/.exec(version)?.[1] ?? 0);

/** The psql script that writes the tenant's rows as the data section of a plain dump, in one snapshot. */
async function tenantDataScript(client: Client, tenantId: string): Promise<{ script: string; tables: string[] }> {
  const r = await client.query<{ table: string; columns: string[] }>(`
    SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
     GROUP BY c.relname ORDER BY c.relname`);
  const lit = `'${tenantId}'`; // validated as a UUID by the caller
  const lines = ['\\set ON_ERROR_STOP on', '\\pset tuples_only on', '\\pset format unaligned', '\\pset footer off', 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;'];
  const tables: string[] = [];
  for (const { table, columns } of r.rows) {
    if (!IDENT.test(table) || !columns.every((c) => IDENT.test(c))) throw new Error(`unexpected identifier in table ${table}`);
    let where: string | undefined;
    if (table === 'tenants') where = `id = ${lit}`;
    else if (columns.includes('tenant_id')) where = `tenant_id = ${lit}`;
    else if (table === 'anchor_batches') where = `id IN (SELECT batch_id FROM public.anchor_tree_heads WHERE tenant_id = ${lit} AND batch_id IS NOT NULL)`;
    else if (WHOLE_TABLES.has(table)) where = 'true';
    else continue;
    const cols = columns.map((c) => `"${c}"`).join(', ');
    tables.push(table);
    lines.push(`\\echo '-- rows of ${table}'`);
    lines.push(`\\echo 'COPY public."${table}" (${cols}) FROM stdin;'`);
    lines.push(`COPY (SELECT ${cols} FROM public."${table}" WHERE ${where}) TO STDOUT;`);
    lines.push(`\\echo '\\\\.'`);
    lines.push(`\\echo ''`);
  }
  lines.push(`\\echo '-- sequences'`);
  lines.push(
    `SELECT format('SELECT pg_catalog.setval(%L, %s, true);', quote_ident(schemaname) || '.' || quote_ident(sequencename), last_value) FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL ORDER BY sequencename;`,
  );
  lines.push('COMMIT;');
  return { script: `${lines.join('\n')}\n`, tables };
}

/** Write one backup into `o.dir` (created 0700; the file 0600) and describe it. */
export async function createBackup(o: BackupOptions): Promise<BackupResult> {
  if (o.tenantId !== undefined && !UUID.test(o.tenantId)) throw InputError.field('tenant_id', 'tenant_id must be a UUID', 'uuid');
  const started = Date.now();
  const { url, env } = connection(o.databaseUrl);
  const pgDump = tool(o.binDir, 'pg_dump');
  const psql = tool(o.binDir, 'psql');
  const pgDumpVersion = (await run(pgDump, ['--version'], { env })).trim();
  const client = new Client({ connectionString: o.databaseUrl });
  await client.connect().catch((e: unknown) => {
    throw new DependencyUnavailableError('the database is unreachable', { cause: e });
  });
  try {
    const serverVersion = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
    if (major(pgDumpVersion.replace(/^[^\d]*/, '')) < major(serverVersion)) {
      throw new DependencyUnavailableError(`${pgDumpVersion} is older than the server (PostgreSQL ${serverVersion}); install the client tools of version ${major(serverVersion)} or newer`);
    }
    await fs.mkdir(o.dir, { recursive: true, mode: 0o700 });
    const createdAt = new Date();
    const backupId = randomUUID();
    const stamp = createdAt.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const scope: BackupScope = o.tenantId ? 'tenant' : 'database';
    const format = o.tenantId ? 'sql' : 'custom';
    const file = `agw-${scope}-${o.tenantId ?? 'all'}-${stamp}-${backupId.slice(0, 8)}.${format === 'sql' ? 'sql' : 'dump'}`;
    const full = path.resolve(o.dir, file);
    const partial = `${full}.partial`;
    let rows: Record<string, number> | undefined;
    try {
      if (!o.tenantId) {
        await run(pgDump, ['--format=custom', '--no-owner', '--no-privileges', `--file=${partial}`, `--dbname=${url}`], { env, timeoutMs: o.timeoutMs });
        await fs.chmod(partial, 0o600);
      } else {
        const { script, tables } = await tenantDataScript(client, o.tenantId);
        const out = createWriteStream(partial, { mode: 0o600 });
        const opened = new Promise<void>((resolve, reject) => out.once('open', () => resolve()).once('error', reject));
        await opened;
        out.write(`-- Agent Governance Gateway: backup ${backupId} of tenant ${o.tenantId}, ${createdAt.toISOString()}\n`);
        out.write(`-- ${pgDumpVersion}; server PostgreSQL ${serverVersion}. Restore into an EMPTY database:\n`);
        out.write(`--   psql -X -v ON_ERROR_STOP=1 --single-transaction -f ${file} <database-url>\n\n`);
        const schema = (section: string) => ['--schema-only', `--section=${section}`, '--no-owner', '--no-privileges', `--dbname=${url}`];
        await run(pgDump, schema('pre-data'), { env, out, timeoutMs: o.timeoutMs });
        await run(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', `--dbname=${url}`, '-f', '-'], { env, out, stdin: script, timeoutMs: o.timeoutMs });
        await run(pgDump, schema('post-data'), { env, out, timeoutMs: o.timeoutMs });
        await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
        rows = await countRows(partial, tables);
      }
      await fs.rename(partial, full);
    } catch (e) {
      await fs.rm(partial, { force: true });
      throw e;
    }
    const stat = await fs.stat(full);
    const result: BackupResult = {
      backup_id: backupId,
      scope,
      tenant_id: o.tenantId ?? null,
      format,
      file,
      path: full,
      size_bytes: stat.size,
      sha256: await sha256Of(full),
      created_at: createdAt.toISOString(),
      duration_ms: Date.now() - started,
      pg_dump_version: pgDumpVersion,
      server_version: serverVersion,
      ...(rows ? { rows } : {}),
      restore_command: format === 'sql' ? `psql -X -v ON_ERROR_STOP=1 --single-transaction -f ${full} <empty-database-url>` : `pg_restore --no-owner --exit-on-error -d <empty-database-url> ${full}`,
    };
    await fs.writeFile(`${full}.json`, `${JSON.stringify(result, null, 2)}\n`, { mode: 0o600 });
    return result;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Rows per table in a plain backup (lines between each COPY header and its `\.`). */
async function countRows(file: string, tables: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = Object.fromEntries(tables.map((t) => [t, 0]));
  const text = await fs.readFile(file, 'utf8');
  let current: string | undefined;
  for (const line of text.split('\n')) {
    if (current) {
      if (line === '\\.') current = undefined;
      else counts[current]++;
    } else {
      const m = /^COPY public\."([a-z0-9_]+)" \(.*\) FROM stdin;$/.exec(line);
      if (m) current = m[1];
    }
  }
  return counts;
}

/** Restore a backup into an (empty) database, as the runbook does by hand. */
export async function restoreBackup(o: { file: string; databaseUrl: string; binDir?: string; timeoutMs?: number }): Promise<void> {
  const { url, env } = connection(o.databaseUrl);
  if (o.file.endsWith('.sql')) {
    await run(tool(o.binDir, 'psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '--single-transaction', `--dbname=${url}`, '-f', o.file], { env, timeoutMs: o.timeoutMs });
  } else {
    await run(tool(o.binDir, 'pg_restore'), ['--no-owner', '--no-privileges', '--exit-on-error', `--dbname=${url}`, o.file], { env, timeoutMs: o.timeoutMs });
  }
}
