/**
 * The fork refusal of signed checkpoints, against the real Postgres (chain, tree heads, stored nodes,
 * checkpoints): before signing a new tree head the audit service checks an RFC 9162 consistency proof from
 * the previous SIGNED checkpoint (its size and root as the signed note states them) and refuses a fork.
 * The previous head is forged here (a validly signed checkpoint of another history), the next head is
 * refused, never signed, and the checkpoint reads answer 409. The signer is an Ed25519 key in this
 * process speaking the vault's NoteSignerPort (the HSM signing itself is tested in services/vault).
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { type Db, TEST_DATABASE_URL, createDb, createLogger, openTestDb } from '@agw/shared';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { CheckpointRepository } from '../src/checkpoints/checkpoint.repository';
import { checkpointText } from '../src/checkpoints/checkpoint-text';
import { CheckpointingSink } from '../src/checkpoints/checkpointing.sink';
import { Checkpoints, ForkRefusedError, type NoteSignerPort } from '../src/checkpoints/checkpoints';
import { MerkleProofs } from '../src/merkle/merkle-proofs';
import { MerkleRepository, type TreeHead } from '../src/merkle/merkle.repository';
import { TreeBuilder } from '../src/merkle/tree-builder';
import { governedEntry } from './support/entries';
const logger = createLogger('test', 'silent');
let db: Db;
let chain: AuditChain;
let builder: TreeBuilder;
let checkpoints: Checkpoints;
const forwarded: TreeHead[] = [];
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

/** A C2SP signed note with a key of this process (name = origin, key id as C2SP defines it). */
const signer: NoteSignerPort = {
  keyName: async (tenantId) => `fork.example.test/agw/${tenantId}`,
  sign: async (tenantId, text) => {
    const keyName = `fork.example.test/agw/${tenantId}`;
    const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    const id = createHash('sha256').update(Buffer.concat([Buffer.from(keyName), Buffer.from([0x0a, 0x01]), pub])).digest().subarray(0, 4);
    const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
    return { note: `${text}\n\u2014 ${keyName} ${Buffer.concat([id, sig]).toString('base64')}\n`, keyName };
  },
};

async function append(tenantId: string, n: number) {
  for (let i = 0; i < n; i++) await chain.append(tenantId, governedEntry({ params: { q: `fork ${i}` } }));
}
const build = async (tenantId: string) => (await builder.buildPending({ tenantId, builtBy: 'trigger', wait: true })).built;

beforeAll(async () => {
  db = await openTestDb();
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  const heads = new MerkleRepository(db);
  checkpoints = new Checkpoints({ repo: new CheckpointRepository(db), heads, proofs: new MerkleProofs(heads), signer, logger });
  builder = new TreeBuilder(db, heads, new CheckpointingSink(checkpoints, { treeBuilt: async (h) => void forwarded.push(h) }, logger), logger);
});
afterAll(async () => {
  await db.destroy();
});

const stored = (tenantId: string) => db.selectFrom('merkle_checkpoints').select(['tree_size', 'merkle_root']).where('tenant_id', '=', tenantId).orderBy('tree_size').execute();

it('signs every head of an honest log, each consistent with the one before', async () => {
  const t = randomUUID();
  await append(t, 5);
  await build(t);
  await append(t, 3);
  await build(t);
  expect((await stored(t)).map((c) => Number(c.tree_size))).toEqual([5, 8]);
});

it('refuses to sign a head inconsistent with a forged previous signed head; the head is still handed on', async () => {
  const t = randomUUID();
  await append(t, 5);
  const [h0] = await build(t);
  expect((await stored(t)).map((c) => Number(c.tree_size))).toEqual([5]);

  // forge the previous head: a validly signed checkpoint of size 5 over another history
  const forgedRoot = createHash('sha256').update('another history').digest('hex');
  const { note } = await signer.sign(t, checkpointText(await signer.keyName(t), 5, forgedRoot));
  await db
    .updateTable('merkle_checkpoints')
    .set({ note, merkle_root: forgedRoot, checkpoint_sha256: createHash('sha256').update(note).digest('hex') })
    .where('tenant_id', '=', t)
    .where('tree_size', '=', 5)
    .execute();

  await append(t, 3);
  const [h1] = await build(t); // the build commits; signing after it is refused
  expect(h1).toMatchObject({ tree_index: 1, tree_size: 8 });
  expect(forwarded.some((h) => h.tenant_id === t && h.tree_index === 1)).toBe(true);
  expect((await stored(t)).map((c) => [Number(c.tree_size), c.merkle_root])).toEqual([[5, forgedRoot]]); // size 8 never signed
  await expect(checkpoints.signPending(t)).rejects.toBeInstanceOf(ForkRefusedError);
  await expect(checkpoints.latest(t)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('not consistent with the checkpoint signed at size 5') });
  await expect(checkpoints.atSize(t, 8)).rejects.toMatchObject({ code: 'conflict' });
  expect(h0.merkle_root).not.toBe(forgedRoot);
});

it('refuses when the previous signed note disagrees with its own row (a note of another size stored as this head)', async () => {
  const t = randomUUID();
  await append(t, 4);
  await build(t);
  // the row says size 4, the signed note says size 3: what was signed is what counts, and it does not match
  const [row] = await db.selectFrom('merkle_checkpoints').select(['merkle_root']).where('tenant_id', '=', t).execute();
  const { note } = await signer.sign(t, checkpointText(await signer.keyName(t), 3, row.merkle_root));
  await db.updateTable('merkle_checkpoints').set({ note }).where('tenant_id', '=', t).execute();
  await append(t, 2);
  await build(t);
  expect((await stored(t)).map((c) => Number(c.tree_size))).toEqual([4]);
  await expect(checkpoints.signPending(t)).rejects.toBeInstanceOf(ForkRefusedError);
});

it('signs with a pool of one connection: the fork check reads through the signing transaction, never a second connection', async () => {
  // ten concurrent signers once held all ten pooled connections of an audit replica (the tenant lock, or
  // waiting for it) while the lock's holder waited for an eleventh to read the consistency proof's nodes:
  // the replica answered nothing until it was restarted. A pool of one is the same wait, every time.
  const one = createDb(TEST_DATABASE_URL, { max: 1 });
  const heads = new MerkleRepository(db);
  const plainBuilder = new TreeBuilder(db, heads, { treeBuilt: async () => undefined }, logger);
  const onePool = new MerkleRepository(one);
  const signing = new Checkpoints({ repo: new CheckpointRepository(one), heads: onePool, proofs: new MerkleProofs(onePool), signer, logger });
  const t = randomUUID();
  const within = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('signPending waited for a second pooled connection')), 10_000).unref())]);
  await append(t, 5);
  await plainBuilder.buildPending({ tenantId: t, builtBy: 'trigger', wait: true });
  expect((await within(signing.signPending(t))).map((c) => c.tree_size)).toEqual([5]);
  await append(t, 3);
  await plainBuilder.buildPending({ tenantId: t, builtBy: 'trigger', wait: true });
  // the previous signed checkpoint exists now: the consistency proof from size 5 to 8 is read and checked
  expect((await within(signing.signPending(t))).map((c) => c.tree_size)).toEqual([8]);
  await one.destroy();
});
