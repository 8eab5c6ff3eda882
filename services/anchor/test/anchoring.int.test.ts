/**
 * Anchoring end to end inside the service (its definition started in-process, test/support/start-anchor.ts):
 * a real anvil node (the embedded chain), the real Postgres, real NATS JetStream (own stream prefix). Tree heads arrive as events, one transaction anchors them
 * all, each tenant's proof leads to the root the chain holds, and a restart reuses the contract.
 */
import { randomUUID } from 'node:crypto';
import { type Bus, type Db, closeTestBus, connectBus, createDb, createLogger, createMetricsRegistry, publishEvent, subjects, freeLoopbackPort } from '@agw/shared';
import { sql } from 'kysely';
import { AnchorContract, type ContractAddressStore } from '../src/chain/anchor-contract';
import { startEmbeddedAnvil } from '../src/chain/embedded-anvil';
import { ANVIL_DEV_KEY } from '../src/config';
import { aggregateLeafBytes, hashLeaf, rootFromProof } from '../src/anchoring/aggregate-tree';
import { ANCHOR_LOCK, AnchorBatcher } from '../src/anchoring/anchor-batcher';
import { AnchorService } from '../src/anchoring/anchor-service';
import type { AnchorRepository } from '../src/anchoring/anchor.repository';
import { AnchorScheduler } from '../src/anchoring/anchor.scheduler';
import { type StartedAnchor, startAnchor } from './support/start-anchor';

const logger = createLogger('test', 'silent');
const prefix = `ANCHORTEST${Date.now()}`;
let anchor: StartedAnchor;
let db: Db;
let repo: AnchorRepository;
let contract: AnchorContract;
let bus: Bus;
let batcher: AnchorBatcher;
const localRoots = new Map<string, string>();
const registry = createMetricsRegistry('anchor-test');
let service: AnchorService;

const eventually = async <T>(fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 100));
  }
};

beforeAll(async () => {
  // the audit service's tree heads are the roots this test names; no signed checkpoints
  anchor = await startAnchor({ prefix, registry, overrides: { localHeads: { rootAt: async (t, i) => localRoots.get(`${t}:${i}`), checkpointDigest: async () => undefined } } });
  ({ service, batcher, repo } = anchor.api);
  contract = anchor.api.chain.contract();
  // a pool of the test's own for what it does beside the service (the advisory lock of another replica)
  db = createDb(anchor.config.databaseUrl!);
  bus = await connectBus(anchor.config.natsUrl!, prefix, 'anchor-test');
}, 60_000);

afterAll(async () => {
  await anchor?.close();
  await closeTestBus(bus);
  await db?.destroy();
});

describe('anchoring', () => {
  it('anchors every pending tenant head in one transaction; each proof leads to the root on chain', async () => {
    // drain heads other test files may have left pending in the shared test database
    await batcher.run({ wait: true });
    const tenants = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, t] of tenants.entries()) {
      const root = Buffer.alloc(32, i + 1).toString('hex');
      localRoots.set(`${t}:0`, root);
      const now = new Date().toISOString();
      await publishEvent(bus, subjects.treeBuilt(prefix, t), { event_id: `tree-${t}-0`, tenant_id: t, tree_index: 0, merkle_root: root, record_count: 10 + i, period_start: now, period_end: now } as never);
    }
    // a redelivered event changes nothing
    await publishEvent(bus, subjects.treeBuilt(prefix, tenants[0]), { event_id: `dup-${tenants[0]}`, tenant_id: tenants[0], tree_index: 0, merkle_root: 'ff'.repeat(32), record_count: 99, period_start: new Date().toISOString(), period_end: new Date().toISOString() } as never);
    await eventually(async () => ((await Promise.all(tenants.map((t) => repo.pendingCount(t)))).every((n) => n === 1) ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));

    const run = await batcher.run({ wait: true });
    expect(run.batch?.leaf_count).toBe(3);
    const { batch } = run;
    const onChain = await contract.rootOfTransaction(batch!.tx_hash as `0x${string}`);
    expect(onChain?.root).toBe(batch!.aggregate_root);
    expect((await contract.anchorOf(batch!.aggregate_root)).leafCount).toBe(3);
    expect(await registry.getSingleMetricAsString('agw_anchor_transactions_total')).toMatch(/outcome="anchored"[^\n]* [1-9]/);

    for (const [i, t] of tenants.entries()) {
      const a = (await service.list(t))[0];
      expect(a).toMatchObject({ tree_index: 0, tree_size: 10 + i, merkle_root: localRoots.get(`${t}:0`), tx_hash: batch!.tx_hash, leaf_count: 3 });
      const leaf = hashLeaf(aggregateLeafBytes({ tenant_id: t, tree_size: 10 + i, merkle_root: localRoots.get(`${t}:0`)! }));
      expect(rootFromProof(leaf, a.leaf_index, a.leaf_count, a.aggregate_proof.map((p) => Buffer.from(p, 'hex')))?.toString('hex')).toBe(batch!.aggregate_root);
      const v = await service.verify(t);
      expect(v).toMatchObject({ verified: true, on_chain_root: batch!.aggregate_root, local_root: batch!.aggregate_root, tx_hash: batch!.tx_hash });
      const s = await service.status(t, '');
      expect(s).toMatchObject({ network: 'local', connected_chains: ['local'], contract_address: contract.address, anchor_count: 1, pending: 0 });
      expect(s.last_anchor?.block_number).toBe(batch!.block_number);
    }

    // a rewritten local tree head no longer verifies
    localRoots.set(`${tenants[1]}:0`, 'ee'.repeat(32));
    expect(await service.verify(tenants[1])).toMatchObject({ verified: false });
    // a tenant with nothing anchored
    expect(await service.verify(randomUUID())).toMatchObject({ verified: false, reason: 'no anchored tree head yet' });
    await expect(service.trigger(randomUUID(), [])).rejects.toMatchObject({ code: 'conflict' });
  });

  it('trigger records the heads it is given and anchors them at once', async () => {
    const t = randomUUID();
    localRoots.set(`${t}:0`, 'ab'.repeat(32));
    const now = new Date().toISOString();
    const a = await service.trigger(t, [{ tree_index: 0, tree_size: 5, merkle_root: 'ab'.repeat(32), period_start: now, period_end: now }]);
    expect(a).toMatchObject({ tree_index: 0, merkle_root: 'ab'.repeat(32), network: 'local' });
    expect((await contract.anchorOf(a.aggregate_root)).timestamp).toBeGreaterThan(0);
    expect(a.explorer_tx_url).toBe('');
  });

  it('limits how often a trigger may send a transaction (gas on a real chain)', async () => {
    const throttled = new AnchorService({
      repo,
      batcher,
      chain: () => anchor.api.chain.state,
      local: { rootAt: async (t, i) => localRoots.get(`${t}:${i}`) },
      logger,
      triggerMinIntervalMs: 3_600_000,
    });
    const t = randomUUID();
    const now = new Date().toISOString();
    // the previous test just anchored: a new head waits for the next transaction (429), nothing is lost
    const refused = await throttled.trigger(t, [{ tree_index: 0, tree_size: 2, merkle_root: 'ef'.repeat(32), period_start: now, period_end: now }]).catch((e) => e);
    expect(refused).toMatchObject({ code: 'rate_limited' });
    // Retry-After at the edge: when the next transaction may be sent
    expect(refused.retryAfterSeconds).toBeGreaterThan(3500);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
    expect(await repo.pendingCount(t)).toBe(1);
    // without the limit the pending head is anchored
    const a = await service.trigger(t, []);
    expect(a).toMatchObject({ tree_index: 0, merkle_root: 'ef'.repeat(32) });
    // already anchored: the throttled trigger answers with the existing anchor
    expect((await throttled.trigger(t, [])).tx_hash).toBe(a.tx_hash);
  });

  it('keeps the heads pending and answers 502 when the chain does not take the transaction', async () => {
    const chainId = 31337;
    const other = await startEmbeddedAnvil({ host: '127.0.0.1', port: await freeLoopbackPort(), chainId, logger });
    const store: ContractAddressStore = { contractAddress: async () => undefined, saveContractAddress: async () => undefined, withDeployLock: (_c, fn) => fn(store) };
    const doomed = await AnchorContract.connect({ rpcUrl: other.rpcUrl, chainId, privateKey: ANVIL_DEV_KEY, store, logger });
    await other.stop();
    const failing = new AnchorBatcher(db, repo, () => doomed, logger, 10_000);
    const t = randomUUID();
    const now = new Date().toISOString();
    await repo.recordTreeHead(t, { tree_index: 0, tree_size: 1, merkle_root: '12'.repeat(32), period_start: now, period_end: now });
    await expect(failing.run({ wait: true })).rejects.toMatchObject({ code: 'dependency_unavailable' });
    expect(await repo.pendingCount(t)).toBe(1);
    expect(await repo.latestAnchored(t)).toBeUndefined();
    await batcher.run({ wait: true });
    expect(await repo.pendingCount(t)).toBe(0);
  }, 30_000);

  it('binds each leaf to the head’s signed checkpoint when the audit service has one; a head without one is anchored anyway', async () => {
    const [signed, unsigned] = [randomUUID(), randomUUID()];
    const digest = 'c4'.repeat(32);
    const asked: string[] = [];
    const bound = new AnchorBatcher(db, repo, () => contract, logger, 10_000, undefined, async (t, size) => {
      asked.push(`${t}:${size}`);
      if (t === unsigned) throw new Error('vault down: no signed checkpoint');
      return digest;
    });
    const now = new Date().toISOString();
    await repo.recordTreeHead(signed, { tree_index: 0, tree_size: 4, merkle_root: '56'.repeat(32), period_start: now, period_end: now });
    await repo.recordTreeHead(unsigned, { tree_index: 0, tree_size: 2, merkle_root: '78'.repeat(32), period_start: now, period_end: now });
    const run = await bound.run({ wait: true });
    expect(asked).toEqual(expect.arrayContaining([`${signed}:4`, `${unsigned}:2`]));
    const a = (await repo.latestAnchored(signed))!;
    const b = (await repo.latestAnchored(unsigned))!;
    expect(a.checkpoint_sha256).toBe(digest);
    expect(b.checkpoint_sha256).toBeNull();
    const leafA = aggregateLeafBytes(a);
    expect(leafA).toHaveLength(88);
    expect(aggregateLeafBytes(b)).toHaveLength(56);
    for (const h of [a, b]) {
      const root = rootFromProof(hashLeaf(aggregateLeafBytes(h)), h.leaf_index, h.leaf_count, h.aggregate_proof.map((p) => Buffer.from(p, 'hex')));
      expect(root?.toString('hex')).toBe(run.batch!.aggregate_root);
    }
    // the anchor's view and the chain agree on that leaf
    expect(service.view(a).leaf_hex).toBe(leafA.toString('hex'));
    expect((await contract.anchorOf(run.batch!.aggregate_root)).timestamp).toBeGreaterThan(0);
  }, 30_000);

  it('anchors on schedule once per clock hour', async () => {
    const scheduler = new AnchorScheduler(batcher, repo, logger, 60_000);
    // earlier tests anchored: the clock hour of the last anchor already has its transaction
    const last = Date.parse((await repo.statsAcrossTenants()).last_anchor_at!);
    const t = randomUUID();
    const now = new Date().toISOString();
    await repo.recordTreeHead(t, { tree_index: 0, tree_size: 3, merkle_root: '34'.repeat(32), period_start: now, period_end: now });
    await scheduler.tick(new Date(last));
    expect(await repo.pendingCount(t)).toBe(1);
    await scheduler.tick(new Date(last + 3_600_000));
    expect(await repo.pendingCount(t)).toBe(0);
    expect(await repo.latestAnchored(t)).toMatchObject({ tree_index: 0, tree_size: 3 });
  });

  it('acknowledges a malformed tree-built event instead of redelivering it forever', async () => {
    const now = new Date().toISOString();
    await publishEvent(bus, subjects.treeBuilt(prefix, 'not-a-uuid'), { event_id: `bad-${Date.now()}`, tenant_id: 'not-a-uuid', tree_index: 0, merkle_root: 'xyz', record_count: 1, period_start: now, period_end: now } as never);
    const t = randomUUID();
    await publishEvent(bus, subjects.treeBuilt(prefix, t), { event_id: `tree-${t}-0`, tenant_id: t, tree_index: 0, merkle_root: 'cd'.repeat(32), record_count: 1, period_start: now, period_end: now } as never);
    await eventually(async () => ((await repo.pendingCount(t)) === 1 ? true : undefined));
    const jsm = await bus.nc.jetstreamManager();
    await eventually(async () => {
      const info = await jsm.consumers.info(`${prefix}_AUDIT`, 'anchor-tree-heads');
      return info.num_ack_pending === 0 && info.num_pending === 0 ? true : undefined;
    });
  });

  it('skips a scheduled run while another replica holds the lock', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${ANCHOR_LOCK})`.execute(trx);
      locked();
      await held;
    });
    await isLocked;
    expect(await batcher.run({ wait: false })).toEqual({ skipped: true });
    release();
    await holder;
  });

  it('reuses the deployed contract after a restart while the chain has its code', async () => {
    const again = await AnchorContract.connect({ rpcUrl: anchor.rpcUrl, chainId: 31337, privateKey: ANVIL_DEV_KEY, store: repo, logger });
    expect(again.address).toBe(contract.address);
  });
});
