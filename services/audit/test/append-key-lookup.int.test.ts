/**
 * An append's idempotency-key look-up stays an index probe however long the tenant's chain is (migration
 * 0025): after five calls PL/pgSQL caches a generic plan, and one planned before `audit_records` was ever
 * analyzed read the tenant's whole chain through another index on every append, so Postgres' work per
 * governed call grew with the chain until the audit service restarted. Measured on one connection (where
 * the plan cache lives) with EXPLAIN (ANALYZE, BUFFERS): the buffers one append touches once 400 more
 * records are in the chain, against the first appends on the empty table (without the fix: 17 → 435).
 */
import { randomUUID } from 'node:crypto';
import { type Db, createDb, dropOwnTestDatabase, migrateToLatest, ownTestDatabase } from '@agw/shared';
import { Client } from 'pg';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { canonicalContent } from '../src/chain/record-hash';
import { governedEntry } from './support/entries';

// a database of its own: the trap showed where one tenant's records fill the table (a generic plan is
// costed from the table's statistics), as in a new deployment or a benchmark
let url: string;
let db: Db;
let pg: Client;

beforeAll(async () => {
  url = await ownTestDatabase('akl', { fresh: true });
  await migrateToLatest(url);
  db = createDb(url);
  pg = new Client({ connectionString: url });
  await pg.connect();
}, 60_000);
afterAll(async () => {
  await pg.end();
  await db.destroy();
  await dropOwnTestDatabase(url);
});

/** One append with an append key, as AuditRecordRepository sends it, explained on the test's one connection: its shared buffer hits. */
async function bufferHitsOfOneAppend(tenantId: string, fn: 'audit_append_batch' | 'audit_append_one' = 'audit_append_batch'): Promise<number> {
  const entry = governedEntry();
  const one = { tenant_id: tenantId, canonical: canonicalContent(entry), ...entry, replay: null, subject: null, event: null, append_key: `t:${randomUUID()}` };
  const { rows } = await pg.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM ${fn}($1::jsonb)`, [JSON.stringify(fn === 'audit_append_one' ? one : [one])]);
  const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }>)[0].Plan;
  return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
}

it('stays a probe when the connection planned it on an empty table, as a new deployment’s audit service does', async () => {
  const tenantId = randomUUID();
  await db.insertInto('tenants').values({ id: tenantId, slug: `ak-${tenantId}`, name: 'append key look-up' }).execute();
  const repo = new AuditRecordRepository(db);
  // the connection's first appends, on an empty table: past the plan cache's five custom plans (of each
  // function: a batch of one is sent to audit_append_one, migration 0029)
  for (let i = 0; i < 8; i++) await bufferHitsOfOneAppend(tenantId);
  for (let i = 0; i < 8; i++) await bufferHitsOfOneAppend(tenantId, 'audit_append_one');
  const short = await bufferHitsOfOneAppend(tenantId);
  const shortOne = await bufferHitsOfOneAppend(tenantId, 'audit_append_one');
  // the chain grows (other connections) before the table is ever analyzed; the connection keeps its cached plan
  for (let i = 0; i < 400; i += 50) {
    await repo.appendBatch(
      Array.from({ length: 50 }, () => {
        const entry = governedEntry();
        return { tenantId, entry, canonical: canonicalContent(entry), appendKey: `k:${randomUUID()}` };
      }),
    );
  }
  const long = await bufferHitsOfOneAppend(tenantId);
  const longOne = await bufferHitsOfOneAppend(tenantId, 'audit_append_one');
  // a probe (the indexes one level deeper: about 20 more buffers), not a scan of the chain (400 records: 400 more)
  expect(long).toBeLessThan(short + 60);
  expect(longOne).toBeLessThan(shortOne + 60);
});
