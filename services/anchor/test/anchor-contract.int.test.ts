/**
 * The RPC path (ANCHOR_RPC_URL): a separate node serving Polygon Amoy's chain id stands in for the
 * remote chain. Network names and explorer links come from viem's chain definitions; a node serving
 * another chain than the configured one is refused.
 */
import { type Db, TEST_DATABASE_URL, createDb, createLogger, freeLoopbackPort, openTestDb } from '@agw/shared';
import { ANVIL_DEV_KEY } from '../src/config';
import { AnchorRepository } from '../src/anchoring/anchor.repository';
import { AnchorContract, explorerAddressUrl, explorerTxUrl, networkOfChainId } from '../src/chain/anchor-contract';
import { type EmbeddedAnvil, startEmbeddedAnvil } from '../src/chain/embedded-anvil';
const logger = createLogger('test', 'silent');
let db: Db;
let node: EmbeddedAnvil;

beforeAll(async () => {
  db = await openTestDb();
  node = await startEmbeddedAnvil({ host: '127.0.0.1', port: await freeLoopbackPort(), chainId: 80002, logger });
  await db.deleteFrom('anchor_contracts').where('chain_id', '=', 80002).execute();
}, 30_000);

afterAll(async () => {
  await node?.stop();
  await db?.destroy();
});

describe('anchoring through an RPC URL', () => {
  it('deploys on the configured chain, anchors, and links to its explorer', async () => {
    const repo = new AnchorRepository(db);
    const contract = await AnchorContract.connect({ rpcUrl: node.rpcUrl, chainId: 80002, privateKey: ANVIL_DEV_KEY, store: repo, logger });
    expect(contract.network).toBe('polygon-amoy');
    expect(await repo.contractAddress(80002)).toBe(contract.address);
    const root = 'a1'.repeat(32);
    const a = await contract.anchor(root, 4);
    expect((await contract.rootOfTransaction(a.txHash))?.root).toBe(root);
    expect(await contract.anchorOf(root)).toMatchObject({ leafCount: 4, blockNumber: a.blockNumber });
    expect(explorerTxUrl(80002, a.txHash)).toBe(`https://amoy.polygonscan.com/tx/${a.txHash}`);
    expect(explorerAddressUrl(137, contract.address)).toBe(`https://polygonscan.com/address/${contract.address}`);
    expect(explorerTxUrl(31337, a.txHash)).toBe('');
    expect(networkOfChainId(137)).toBe('polygon');
  });

  it('refuses a node that serves another chain than the configured one', async () => {
    await expect(AnchorContract.connect({ rpcUrl: node.rpcUrl, chainId: 137, privateKey: ANVIL_DEV_KEY, store: new AnchorRepository(db), logger })).rejects.toThrow(
      /serves chain 80002, not the configured chain 137/,
    );
  });

  it('replicas connecting at the same time to a chain without the contract deploy it once and share it', async () => {
    await db.deleteFrom('anchor_contracts').where('chain_id', '=', 80002).execute();
    const other = await startEmbeddedAnvil({ host: '127.0.0.1', port: await freeLoopbackPort(), chainId: 80002, logger });
    try {
      const connect = () => AnchorContract.connect({ rpcUrl: other.rpcUrl, chainId: 80002, privateKey: ANVIL_DEV_KEY, store: new AnchorRepository(db), logger });
      const replicas = await Promise.all([connect(), connect(), connect()]);
      expect(new Set(replicas.map((c) => c.address)).size).toBe(1);
      expect(await new AnchorRepository(db).contractAddress(80002)).toBe(replicas[0].address);
      // every replica writes to the contract the others read from
      const a = await replicas[1].anchor('b2'.repeat(32), 2);
      expect(await replicas[2].anchorOf('b2'.repeat(32))).toMatchObject({ leafCount: 2, blockNumber: a.blockNumber });
    } finally {
      await other.stop();
    }
  }, 30_000);

  it('connects with a pool of one connection: the address is read and saved through the deploy lock\'s connection, never a second one', async () => {
    // the deploy lock holds one pooled connection (a session advisory lock) while the address is read, the
    // contract deployed and the address saved. Read and saved through the pool, each waited for a second
    // connection: with DB_POOL_MAX=1 the anchor service could not connect its chain. A pool of one is the
    // same wait, every time.
    await db.deleteFrom('anchor_contracts').where('chain_id', '=', 80002).execute();
    const one = createDb(TEST_DATABASE_URL, { max: 1 });
    const fresh = await startEmbeddedAnvil({ host: '127.0.0.1', port: await freeLoopbackPort(), chainId: 80002, logger });
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('connect waited for a second pooled connection')), 10_000).unref())]);
    try {
      const connect = () => AnchorContract.connect({ rpcUrl: fresh.rpcUrl, chainId: 80002, privateKey: ANVIL_DEV_KEY, store: new AnchorRepository(one), logger });
      const deployed = await within(connect()); // no address stored: read, deploy, save
      expect(await new AnchorRepository(db).contractAddress(80002)).toBe(deployed.address);
      const again = await within(connect()); // the stored address is read, and its code found on the chain
      expect(again.address).toBe(deployed.address);
    } finally {
      await fresh.stop();
      await one.destroy();
    }
  }, 30_000);
});
