/**
 * Witnesses of the tenants' logs, against the real Postgres (chain, tree heads, stored nodes, checkpoints,
 * cosignatures) and two real witnesses (packages/witness, the agw-witness server, on loopback HTTP):
 * - every new checkpoint is cosigned by both, with consistency proofs from what each saw last;
 * - one witness stopped: the policy "1 of 2" still verifies, "2 of 2" fails; started again, it catches up
 *   on the next checkpoint (a 409 names its size, the proof is made from there);
 * - a witness that saw another view (fed a forked checkpoint of the same size first) refuses with 422: the
 *   refusal is counted, logged as an alert, and appended to the tenant's chain as `witness_refused` with its
 *   decision event in the outbox (the webhook event `evidence.witness_refused`).
 * The log's signer is an Ed25519 key in this process speaking the vault's NoteSignerPort (as in
 * checkpoint-fork.int.test.ts).
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkWitnessPolicy, keyIdOf, parseCosignerKey } from '@agw/verifier';
import { FileWitnessStore, type RunningWitness, Witness, serveWitness, witnessKeyFromSeed } from '@agw/witness';
import { Counter, type Db, Registry, createLogger, openTestDb } from '@agw/shared';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { CheckpointRepository } from '../src/checkpoints/checkpoint.repository';
import { checkpointText } from '../src/checkpoints/checkpoint-text';
import { CheckpointingSink } from '../src/checkpoints/checkpointing.sink';
import { Checkpoints, type NoteSignerPort } from '../src/checkpoints/checkpoints';
import { CosignatureRepository, Witnessing, cosignedNote } from '../src/checkpoints/witnessing';
import { MerkleProofs } from '../src/merkle/merkle-proofs';
import { MerkleRepository } from '../src/merkle/merkle.repository';
import { TreeBuilder } from '../src/merkle/tree-builder';
import { governedEntry } from './support/entries';

jest.setTimeout(60_000);

const logger = createLogger('test', 'silent');
const dir = mkdtempSync(path.join(tmpdir(), 'agw-witnessing-'));
let db: Db;
let chain: AuditChain;
let builder: TreeBuilder;
let checkpoints: Checkpoints;
let cosigs: CosignatureRepository;
const registry = new Registry();
const refusals = new Counter({ name: 'test_witness_refusals_total', help: 't', labelNames: ['witness', 'status'], registers: [registry] });
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
const keyName = (t: string) => `witness.example.test/agw/${t}`;
const vkeyOf = (t: string) => `${keyName(t)}+${keyIdOf(keyName(t), pub).toString('hex')}+${Buffer.concat([Buffer.from([1]), pub]).toString('base64')}`;
const signer: NoteSignerPort = {
  keyName: async (t) => keyName(t),
  sign: async (t, text) => {
    const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
    return { note: `${text}\n\u2014 ${keyName(t)} ${Buffer.concat([keyIdOf(keyName(t), pub), sig]).toString('base64')}\n`, keyName: keyName(t) };
  },
};

const keys = [witnessKeyFromSeed('w1.example.test/witness', Buffer.alloc(32, 1)), witnessKeyFromSeed('w2.example.test/witness', Buffer.alloc(32, 2))];
const stores = keys.map((_, i) => new FileWitnessStore(path.join(dir, `w${i + 1}.json`)));
const witnesses = keys.map((key, i) => new Witness({ key, store: stores[i], pinPrefix: 'witness.example.test/agw/' }));
const running: Array<RunningWitness | undefined> = [undefined, undefined];
const ports = [0, 0];
async function start(i: number) {
  running[i] = await serveWitness(witnesses[i], { port: ports[i] });
  ports[i] = running[i]!.port;
}
async function stop(i: number) {
  await running[i]?.close();
  running[i] = undefined;
}

async function append(t: string, n: number) {
  for (let i = 0; i < n; i++) await chain.append(t, governedEntry({ params: { q: `w ${i}` } }));
}
const build = async (t: string) => (await builder.buildPending({ tenantId: t, builtBy: 'trigger', wait: true })).built;
const cosignedLatest = async (t: string) => {
  const c = await checkpoints.latest(t);
  return { size: c.tree_size, note: cosignedNote(c.note, (await cosigs.ofSizes(t, [c.tree_size])).get(c.tree_size) ?? []) };
};
const cosignerKeys = keys.map((k) => parseCosignerKey(k.vkey));

beforeAll(async () => {
  db = await openTestDb();
  await Promise.all([start(0), start(1)]);
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  const heads = new MerkleRepository(db);
  const proofs = new MerkleProofs(heads);
  checkpoints = new Checkpoints({ repo: new CheckpointRepository(db), heads, proofs, signer, logger });
  cosigs = new CosignatureRepository(db);
  const witnessing = new Witnessing({
    witnesses: keys.map((k, i) => ({ url: `http://127.0.0.1:${ports[i]}`, key: parseCosignerKey(k.vkey) })),
    repo: cosigs,
    consistencyProof: (t, a, b) => proofs.consistencyProofBySize(t, a, b),
    logVkey: async (t) => vkeyOf(t),
    recordRefusal: async (t, record, appendKey) => void (await chain.append(t, record, { eventKind: 'witness_refused', appendKey })),
    refusals,
    cosignatures: new Counter({ name: 'test_witness_cosignatures_total', help: 't', labelNames: ['witness'], registers: [registry] }),
    logger,
    timeoutMs: 2000,
  });
  builder = new TreeBuilder(db, heads, new CheckpointingSink(checkpoints, { treeBuilt: async () => undefined }, logger, witnessing), logger);
});
afterAll(async () => {
  await Promise.all([stop(0), stop(1)]);
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

it('both witnesses cosign every new checkpoint, each from the size it saw last', async () => {
  const t = randomUUID();
  await append(t, 5);
  await build(t);
  expect(checkWitnessPolicy((await cosignedLatest(t)).note, cosignerKeys, 2).ok).toBe(true);
  await append(t, 6);
  await build(t);
  const latest = await cosignedLatest(t);
  expect(latest.size).toBe(11);
  expect(checkWitnessPolicy(latest.note, cosignerKeys, 2)).toMatchObject({ ok: true, missing: [] });
  // each witness keeps the latest checkpoint it cosigned, for monitors
  const hash = createHash('sha256').update(keyName(t)).digest('hex');
  expect((await witnesses[0].latest(hash)).body).toContain(`11\n`);
});

it('one witness stopped: 1 of 2 still verifies, 2 of 2 fails; started again it catches up on the next checkpoint', async () => {
  const t = randomUUID();
  await append(t, 4);
  await build(t);
  await stop(1);
  await append(t, 4);
  await build(t);
  const one = await cosignedLatest(t);
  expect(one.size).toBe(8);
  expect(checkWitnessPolicy(one.note, cosignerKeys, 1)).toMatchObject({ ok: true, missing: ['w2.example.test/witness'] });
  expect(checkWitnessPolicy(one.note, cosignerKeys, 2).ok).toBe(false);
  await start(1);
  await append(t, 2);
  await build(t);
  expect(checkWitnessPolicy((await cosignedLatest(t)).note, cosignerKeys, 2).ok).toBe(true);
});

it('a witness that saw a forked checkpoint refuses the log\'s: counted, an alert, a witness_refused record with its event', async () => {
  const t = randomUUID();
  await append(t, 3);
  await build(t);
  // a fork shown to witness 2 alone: a validly signed checkpoint of size 6 over another history
  const forged = await signer.sign(t, checkpointText(keyName(t), 6, createHash('sha256').update('another history').digest('hex')));
  // sent without a proof the witness refuses it (3 → 6 needs one): a witness cannot be fed a fork it can check,
  // so the split view it was shown is made by writing the forged checkpoint into its state directly
  const res = await fetch(`http://127.0.0.1:${ports[1]}/add-checkpoint`, { method: 'POST', body: `old 3\n\n${forged.note}` });
  expect(res.status).toBe(422);
  const state = await stores[1].get(keyName(t));
  await stores[1].put(keyName(t), { ...state!, size: 6, root: Buffer.from(createHash('sha256').update('another history').digest()).toString('base64'), checkpoint: forged.note });
  const before = (await refusals.get()).values.find((v) => v.labels.witness === 'w2.example.test/witness' && v.labels.status === '422')?.value ?? 0;
  await append(t, 3);
  await build(t);
  const after = (await refusals.get()).values.find((v) => v.labels.witness === 'w2.example.test/witness' && v.labels.status === '422')?.value ?? 0;
  expect(after).toBe(before + 1);
  const latest = await cosignedLatest(t);
  expect(checkWitnessPolicy(latest.note, cosignerKeys, 1)).toMatchObject({ ok: true, missing: ['w2.example.test/witness'] });
  const records = await chain.list(t, { limit: 50 });
  const refusal = records.find((r) => r.decision === 'witness_refused');
  expect(refusal).toMatchObject({ source: 'control_plane', tool: 'witness', method: 'w2.example.test/witness', severity: 'critical', alert_tier: 'P1' });
  expect(refusal!.details).toMatchObject({ event: 'evidence.witness_refused', status: 422, tree_size: 6 });
  const outbox = await db.selectFrom('event_outbox').select('subject').where('subject', '=', `decisions.${t}.witness_refused`).execute();
  expect(outbox).toHaveLength(1);
});
