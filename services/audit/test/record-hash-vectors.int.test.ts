/**
 * The record hash's two forms against each other, on the shared vectors (fixtures/record-hash-vectors.json:
 * records with awkward content and their expected hashes, one chain from GENESIS), against the real Postgres:
 * - appended through the registered SQL functions (packages/shared/src/db/functions/audit-append.sql.ts), the
 *   hashes Postgres computes are the file's, whether a record goes through `audit_append_one` or a batch;
 * - read back from the table, every record's canonical JSON and hash as record-hash.ts recomputes them on
 *   verify are the file's, and the chains verify;
 * - the function bodies as the migrations before 0042 defined them (frozen history: 0027, 0029) write the
 *   same rows and hashes as the registered ones, so chains written before still verify.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Db, openTestDb } from '@agw/shared';
import { sql } from 'kysely';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository, appendPayload } from '../src/chain/audit-record.repository';
import { type ChainEntry, GENESIS, canonicalContent, recordHash } from '../src/chain/record-hash';

const MIGRATIONS = path.join(__dirname, '../../../packages/shared/src/db/migrations');
const { vectors } = JSON.parse(readFileSync(path.join(__dirname, 'fixtures/record-hash-vectors.json'), 'utf8')) as {
  vectors: Array<{ name: string; entry: ChainEntry; canonical: string; prev_hash: string; record_hash: string }>;
};
let db: Db;
let repo: AuditRecordRepository;

beforeAll(async () => {
  db = await openTestDb();
  repo = new AuditRecordRepository(db);
});
afterAll(() => db.destroy());

const payload = (tenantId: string, entry: ChainEntry) => appendPayload({ tenantId, entry, canonical: canonicalContent(entry) });

/** The tenant's chain as stored, read back as verification reads it (COPY, chainRecords). */
async function readBack(tenantId: string) {
  const out = [];
  for await (const batch of repo.chainRecords(tenantId, 0, null)) out.push(...batch);
  return out;
}

/** Appends the vectors to a fresh tenant through the named functions: the first as a batch (no head row yet), the rest one by one. */
async function appendThrough(fns: { one: string; batch: string }): Promise<{ tenantId: string; hashes: string[] }> {
  const tenantId = randomUUID();
  const hashes: string[] = [];
  const first = await sql<{ record_hash: string }>`SELECT * FROM ${sql.raw(fns.batch)}(${JSON.stringify([payload(tenantId, vectors[0].entry)])}::jsonb)`.execute(db);
  hashes.push(first.rows[0].record_hash);
  for (const v of vectors.slice(1)) {
    const { rows } = await sql<{ record_hash: string }>`SELECT * FROM ${sql.raw(fns.one)}(${JSON.stringify(payload(tenantId, v.entry))}::jsonb)`.execute(db);
    expect(rows).toHaveLength(1); // written by this function, not left to the batch function
    hashes.push(rows[0].record_hash);
  }
  return { tenantId, hashes };
}

const expected = vectors.map((v) => v.record_hash);

it('the canonical JSON the audit service sends is the file\'s', () => {
  for (const v of vectors) expect(canonicalContent(v.entry)).toBe(v.canonical);
});

it('Postgres hashes each vector as the file says, through audit_append_one, through a batch, and through the chain', async () => {
  const single = await appendThrough({ one: 'audit_append_one', batch: 'audit_append_batch' });
  expect(single.hashes).toEqual(expected);

  const batchTenant = randomUUID();
  const batch = await repo.appendBatch(vectors.map((v) => ({ tenantId: batchTenant, entry: v.entry, canonical: canonicalContent(v.entry) })));
  expect(batch.map((b) => b.record.record_hash)).toEqual(expected);
  expect(batch.map((b) => b.record.prev_hash)).toEqual(vectors.map((v) => v.prev_hash));

  const chainTenant = randomUUID();
  const chain = new AuditChain(repo, { tamperDemo: false });
  for (const v of vectors) await chain.append(chainTenant, v.entry);

  for (const tenantId of [single.tenantId, batchTenant, chainTenant]) {
    const stored = await readBack(tenantId);
    expect(stored.map((r) => r.record_hash)).toEqual(expected);
    stored.forEach((r, i) => {
      // what verification recomputes from the stored fields: the same bytes, the same hash
      expect(canonicalContent(r)).toBe(vectors[i].canonical);
      expect(recordHash(r, i === 0 ? GENESIS : stored[i - 1].record_hash)).toBe(vectors[i].record_hash);
    });
    await expect(chain.verify(tenantId)).resolves.toMatchObject({ valid: true, record_count: vectors.length });
  }
});

/** A function as a frozen migration defined it, created under another name. */
function frozenFunction(file: string, name: string, as: string): string {
  const text = readFileSync(path.join(MIGRATIONS, file), 'utf8');
  const m = text.match(new RegExp(`CREATE OR REPLACE FUNCTION ${name}\\(([\\s\\S]*?)\\$fn\\$;`));
  if (!m) throw new Error(`${name} not found in ${file}`);
  return m[0].replace(`FUNCTION ${name}(`, `FUNCTION ${as}(`);
}

it('the bodies of migrations 0027 and 0029 and the registered ones write the same rows and hashes', async () => {
  const old = { one: 'audit_append_one_before_0042', batch: 'audit_append_batch_before_0042' };
  await sql.raw(frozenFunction('20261208_0029_audit_append_one.ts', 'audit_append_one', old.one)).execute(db);
  await sql.raw(frozenFunction('20261206_0027_append_batch_set_based.ts', 'audit_append_batch', old.batch)).execute(db);
  try {
    const before = await appendThrough(old);
    const now = await appendThrough({ one: 'audit_append_one', batch: 'audit_append_batch' });
    expect(before.hashes).toEqual(expected);
    expect(now.hashes).toEqual(expected);
    const rows = (tenantId: string) =>
      db
        .selectFrom('audit_records')
        .select(['tenant_seq', 'action_id', 'agent_id', 'agent_type', 'agent_version', 'tool', 'method', 'params', 'decision', 'violations', 'severity', 'alert_tier'])
        .select(['requires_human', 'execution_mode', 'source', 'session_id', 'bundle_revision', 'details', 'requested_at', 'prev_hash', 'record_hash', 'append_key'])
        .where('tenant_id', '=', tenantId)
        .orderBy('tenant_seq')
        .execute();
    expect(await rows(now.tenantId)).toEqual(await rows(before.tenantId));
    const chain = new AuditChain(repo, { tamperDemo: false });
    await expect(chain.verify(before.tenantId)).resolves.toMatchObject({ valid: true, record_count: vectors.length });
  } finally {
    await sql.raw(`DROP FUNCTION IF EXISTS ${old.one}(jsonb); DROP FUNCTION IF EXISTS ${old.batch}(jsonb)`).execute(db);
  }
});
