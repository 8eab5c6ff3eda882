/** Tree heads, stored nodes and proofs against the real local Postgres. */
import { randomUUID } from 'node:crypto';
import { type Db, createLogger, openTestDb } from '@agw/shared';
import { sql } from 'kysely';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import type { ChainEntry } from '../src/chain/record-hash';
import { MerkleProofs } from '../src/merkle/merkle-proofs';
import { MerkleRepository, type TreeHead } from '../src/merkle/merkle.repository';
import { hashLeaf, recordLeafBytes, rootOfLeafHashes, verifyConsistency, verifyInclusion } from '../src/merkle/rfc9162';
import { MERKLE_BUILD_LOCK, TreeBuilder } from '../src/merkle/tree-builder';
import { UpperNodeCache } from '../src/merkle/upper-node-cache';
import { governedEntry } from './support/entries';

let db: Db;
let chain: AuditChain;
let repo: MerkleRepository;
let builder: TreeBuilder;
let proofs: MerkleProofs;
const published: TreeHead[] = [];

const entry = (i: number): ChainEntry => governedEntry({ params: { q: `query ${i}` }, bundle_revision: 'rev-1' });

async function append(tenantId: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((await chain.append(tenantId, entry(i))).record_hash);
  return out;
}

beforeAll(async () => {
  db = await openTestDb();
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  repo = new MerkleRepository(db);
  builder = new TreeBuilder(db, repo, { treeBuilt: async (h) => void published.push(h) }, createLogger('test', 'silent'));
  proofs = new MerkleProofs(repo);
});

afterAll(async () => {
  await db.destroy();
});

describe('Merkle tree heads', () => {
  it('builds cumulative heads whose roots are the RFC 9162 MTH of the record hashes', async () => {
    const tenant = randomUUID();
    const hashes = await append(tenant, 13);
    const r1 = await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    expect(r1.built).toHaveLength(1);
    const h0 = r1.built[0];
    const leaves = hashes.map((h) => hashLeaf(recordLeafBytes(h)));
    // from/to_record_id are the tenant's record ids (1-based positions in its chain), not global row keys
    expect(h0).toMatchObject({ tenant_id: tenant, tree_index: 0, tree_size: 13, records_added: 13, from_record_id: 1, to_record_id: 13, built_by: 'trigger' });
    expect(h0.merkle_root).toBe(rootOfLeafHashes(leaves).toString('hex'));
    expect(published.some((p) => p.tenant_id === tenant && p.tree_index === 0)).toBe(true);

    // nothing pending: no new head
    expect((await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true })).built).toHaveLength(0);

    const more = await append(tenant, 20);
    const h1 = (await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true })).built[0];
    const all = [...hashes, ...more].map((h) => hashLeaf(recordLeafBytes(h)));
    expect(h1).toMatchObject({ tree_index: 1, tree_size: 33, records_added: 20, period_start: h0.period_end });
    expect(h1).toMatchObject({ from_record_id: 14, to_record_id: 33 });
    // read back the same way (the columns keep the global row keys, which are never shown)
    expect((await proofs.listHeads(tenant)).map((h) => [h.from_record_id, h.to_record_id])).toEqual([[1, 13], [14, 33]]);
    const keys = await db.selectFrom('merkle_tree_heads').select(['from_record_id', 'to_record_id']).where('tenant_id', '=', tenant).orderBy('tree_index').execute();
    const rowKeys = await db.selectFrom('audit_records').select('id').where('tenant_id', '=', tenant).where('tenant_seq', 'in', [0, 12, 13, 32]).orderBy('tenant_seq').execute();
    expect(keys.map((k) => [Number(k.from_record_id), Number(k.to_record_id)])).toEqual([[Number(rowKeys[0].id), Number(rowKeys[1].id)], [Number(rowKeys[2].id), Number(rowKeys[3].id)]]);
    expect(h1.merkle_root).toBe(rootOfLeafHashes(all).toString('hex'));

    // every record has a valid inclusion proof against the latest head, checked independently
    for (const [i, h] of [...hashes, ...more].entries()) {
      const p = await proofs.inclusion(tenant, h);
      expect(p.verified).toBe(true);
      expect(p.leaf_index).toBe(i);
      expect(p.record_id).toBe(i + 1);
      expect(p.tree.tree_index).toBe(1);
      expect(verifyInclusion(all[i], i, 33, p.proof.map((x) => Buffer.from(x, 'hex')), Buffer.from(h1.merkle_root, 'hex'))).toBe(true);
    }

    // against an earlier (e.g. anchored) head that includes the record, and refused for one that does not
    const early = await proofs.inclusion(tenant, hashes[4], 0);
    expect(early).toMatchObject({ verified: true, leaf_index: 4 });
    expect(early.tree).toMatchObject({ tree_index: 0, merkle_root: h0.merkle_root });
    await expect(proofs.inclusion(tenant, more[0], 0)).rejects.toMatchObject({ code: 'conflict' });
    await expect(proofs.inclusion(tenant, hashes[0], 9)).rejects.toMatchObject({ code: 'not_found' });
    await expect(proofs.inclusion(tenant, hashes[0], -1)).rejects.toMatchObject({ code: 'invalid_input' });

    const c = await proofs.consistency(tenant, 0, 1);
    expect(c.verified).toBe(true);
    expect(verifyConsistency(13, 33, Buffer.from(h0.merkle_root, 'hex'), Buffer.from(h1.merkle_root, 'hex'), c.proof.map((x) => Buffer.from(x, 'hex')))).toBe(true);
    expect((await proofs.consistency(tenant, 1, 1)).proof).toEqual([]);
  });

  it('grows one leaf at a time with every intermediate root correct', async () => {
    const tenant = randomUUID();
    const leaves: Buffer[] = [];
    for (let i = 0; i < 18; i++) {
      const [h] = await append(tenant, 1);
      leaves.push(hashLeaf(recordLeafBytes(h)));
      const head = (await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true })).built[0];
      expect(head.merkle_root).toBe(rootOfLeafHashes(leaves).toString('hex'));
    }
    for (let m = 0; m < 18; m++) expect((await proofs.consistency(tenant, m, 17)).verified).toBe(true);
  });

  it('answers 409 before a tree includes a record, 404 for unknown hashes or other tenants, 422 for bad input', async () => {
    const tenant = randomUUID();
    const [h] = await append(tenant, 1);
    await expect(proofs.inclusion(tenant, h)).rejects.toMatchObject({ code: 'conflict' });
    await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    const [later] = await append(tenant, 1);
    await expect(proofs.inclusion(tenant, later)).rejects.toMatchObject({ code: 'conflict' });
    expect((await proofs.inclusion(tenant, h)).verified).toBe(true);
    await expect(proofs.inclusion(randomUUID(), h)).rejects.toMatchObject({ code: 'not_found' });
    await expect(proofs.inclusion(tenant, 'f'.repeat(64))).rejects.toMatchObject({ code: 'not_found' });
    await expect(proofs.inclusion(tenant, 'not-a-hash')).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(proofs.consistency(tenant, 0, 5)).rejects.toMatchObject({ code: 'not_found' });
    await expect(proofs.consistency(tenant, 1, 0)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(proofs.consistency(randomUUID(), 0, 0)).rejects.toMatchObject({ code: 'not_found' });
    // the record and the head are read in one statement: each absence is told apart
    await expect(proofs.inclusion(tenant, 'e'.repeat(64), 0)).rejects.toMatchObject({ code: 'not_found', message: 'No audit record with this record_hash' });
    await expect(proofs.inclusion(tenant, h, 7)).rejects.toMatchObject({ code: 'not_found', message: 'Tree head 7 not found' });
    await expect(proofs.consistency(tenant, 0, 3)).rejects.toMatchObject({ code: 'not_found', message: 'Tree head 3 not found' });
    await expect(proofs.consistency(tenant, 2, 3)).rejects.toMatchObject({ code: 'not_found', message: 'Tree head 2 not found' });
    expect(await proofs['repo'].recordAndHead(randomUUID(), h)).toEqual({ record: undefined, head: undefined });
    expect((await proofs.inclusion(tenant, h, 0)).tree.tree_index).toBe(0);
  });

  it('retries a tree-built event that could not be published on the next build', async () => {
    const tenant = randomUUID();
    await append(tenant, 2);
    const sent: TreeHead[] = [];
    let down = true;
    const flaky = new TreeBuilder(
      db,
      repo,
      {
        treeBuilt: async (h) => {
          if (down) throw new Error('NATS is down');
          sent.push(h);
        },
      },
      createLogger('test', 'silent'),
    );
    await flaky.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    expect(sent).toHaveLength(0);
    down = false;
    await flaky.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    expect(sent.map((h) => [h.tenant_id, h.tree_index])).toEqual([[tenant, 0]]);
  });

  it("isolates a tenant whose chain cannot be built: the other tenants' heads are still written", async () => {
    const broken = randomUUID();
    const fine = randomUUID();
    await append(broken, 3);
    await append(fine, 2);
    // simulate corruption: a gap in the broken tenant's leaf sequence
    await sql`UPDATE audit_records SET tenant_seq = 7 WHERE tenant_id = ${broken} AND tenant_seq = 1`.execute(db);
    const r = await builder.buildPending({ builtBy: 'schedule', wait: true });
    expect(r.built.some((h) => h.tenant_id === fine && h.tree_size === 2)).toBe(true);
    expect(r.built.some((h) => h.tenant_id === broken)).toBe(false);
    await expect(builder.buildPending({ tenantId: broken, builtBy: 'trigger', wait: true })).rejects.toThrow(/gap at leaf 1/);
    await sql`UPDATE audit_records SET tenant_seq = 1 WHERE tenant_id = ${broken} AND tenant_seq = 7`.execute(db);
  });

  it('lets exactly one replica build: the schedule skips while another holds the advisory lock', async () => {
    const tenant = randomUUID();
    await append(tenant, 3);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MERKLE_BUILD_LOCK})`.execute(trx);
      locked();
      await held;
    });
    await isLocked;
    const skipped = await builder.buildPending({ builtBy: 'schedule', wait: false, oncePerHour: true });
    expect(skipped).toEqual({ skipped: true, built: [] });
    release();
    await holder;
    const T = new Date();
    const ran = await builder.buildPending({ builtBy: 'schedule', wait: false, oncePerHour: true, now: T });
    expect(ran.skipped).toBe(false);
    expect(ran.built.some((h) => h.tenant_id === tenant && h.tree_size === 3 && h.built_by === 'schedule')).toBe(true);
    // once per clock hour: more records in the same hour wait for the next hour's build
    await append(tenant, 1);
    const again = await builder.buildPending({ builtBy: 'schedule', wait: false, oncePerHour: true, now: T });
    expect(again.built.some((h) => h.tenant_id === tenant)).toBe(false);
    const nextHour = await builder.buildPending({ builtBy: 'schedule', wait: false, oncePerHour: true, now: new Date(T.getTime() + 3_600_000) });
    expect(nextHour.built.find((h) => h.tenant_id === tenant)?.tree_size).toBe(4);
  });

  it('takes the upper levels of a tree from memory, and a stale cached node never changes an answer', async () => {
    const tenant = randomUUID();
    const hashes = await append(tenant, 40);
    await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    await append(tenant, 9);
    await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
    // level 2 and above kept (a 49-leaf tree; the service keeps level 8 and above of trees 256× larger)
    const cache = new UpperNodeCache({ minLevel: 2, maxNodes: 1_000 });
    const cached = new MerkleProofs(repo, cache);
    const read = jest.spyOn(repo, 'nodes');
    try {
      const first = await cached.inclusion(tenant, hashes[0]);
      const firstKeys = read.mock.calls.at(-1)?.[1] ?? [];
      expect(first.verified).toBe(true);
      expect(cache.size).toBeGreaterThan(0);
      const again = await cached.inclusion(tenant, hashes[0]);
      // the same proof, with only the nodes below level 2 read from the table
      expect(again).toEqual(first);
      const againKeys = read.mock.calls.at(-1)?.[1] ?? [];
      expect(againKeys.length).toBeLessThan(firstKeys.length);
      expect(againKeys.every((k) => k.level < 2)).toBe(true);
      expect(again).toEqual(await proofs.inclusion(tenant, hashes[0]));

      // a cached node that no longer matches the table (an older backup restored, the chain continued
      // differently): the proof made with it does not verify, so it is made again from the table
      cache.remember(tenant, [{ level: 2, index: 1 }], new Map([['2:1', Buffer.alloc(32, 7)]]));
      expect(await cached.inclusion(tenant, hashes[0])).toEqual(first);
      const c = await cached.consistency(tenant, 0, 1);
      expect(c.verified).toBe(true);
      cache.remember(tenant, [{ level: 5, index: 0 }], new Map([['5:0', Buffer.alloc(32, 7)]]));
      expect(await cached.consistency(tenant, 0, 1)).toEqual(c);
      expect(await cached.consistentBySize(tenant, 40, c.first.merkle_root, 49, c.second.merkle_root)).toBe(true);
      cache.remember(tenant, [{ level: 5, index: 0 }], new Map([['5:0', Buffer.alloc(32, 7)]]));
      expect(await cached.consistentBySize(tenant, 40, c.first.merkle_root, 49, c.second.merkle_root)).toBe(true);
      // and a wrong root is still refused
      expect(await cached.consistentBySize(tenant, 40, c.second.merkle_root, 49, c.second.merkle_root)).toBe(false);
    } finally {
      read.mockRestore();
    }
  });
});
