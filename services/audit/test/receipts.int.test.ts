/**
 * Receipts through the real Append RPC (gRPC server and client) against the real Postgres: every append is
 * answered with a receipt signed right after its commit; the receipt key is delegated once per tenant (one
 * SignNote for many appends, concurrent first appends included); a vault that cannot sign leaves the
 * record committed without a receipt; GetReceipt issues the receipt again and GetReceiptProof gives the
 * proof to the first signed checkpoint (pending before). Everything verifies with @agw/verifier. The log
 * key is an Ed25519 key of this process speaking the vault's NoteSignerPort (the HSM side is tested in
 * services/vault).
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { TEST_DATABASE_URL, createLogger, migrateToLatest, toAuditEntry } from '@agw/shared';
import { parseVerifierKey, verifyReceipt } from '@agw/verifier';
import type { AuditOverrides } from '../src/audit.service';
import type { NoteSignerPort } from '../src/checkpoints/checkpoints';
import type { TreeBuilder } from '../src/merkle/tree-builder';
import { Receipts } from '../src/receipts/receipts';
import { governedEntry } from './support/entries';
import { startAudit } from './support/start-audit';
const logger = createLogger('test', 'silent');
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
const nameOf = (tenantId: string) => `receipts.example.test/agw/${tenantId}`;
const idOf = (name: string) => createHash('sha256').update(Buffer.concat([Buffer.from(name), Buffer.from([0x0a, 0x01]), pub])).digest().subarray(0, 4);
const vkeyOf = (tenantId: string) => parseVerifierKey(`${nameOf(tenantId)}+${idOf(nameOf(tenantId)).toString('hex')}+${Buffer.concat([Buffer.from([1]), pub]).toString('base64')}`);

const signed: string[] = [];
let vaultDown = false;
const signer: AuditOverrides['noteSigner'] = {
  keyName: async (tenantId) => nameOf(tenantId),
  sign: async (tenantId, text) => {
    if (vaultDown) throw Object.assign(new Error('vault unreachable'), { code: 14 });
    signed.push(text.split('\n')[0]);
    const keyName = nameOf(tenantId);
    const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
    return { note: `${text}\n\u2014 ${keyName} ${Buffer.concat([idOf(keyName), sig]).toString('base64')}\n`, keyName };
  },
  verifierKey: async () => {
    throw new Error('the verifier key is not read by these tests (vkeyOf is)');
  },
};

let audit: Awaited<ReturnType<typeof startAudit>>;
let client: Awaited<ReturnType<typeof startAudit>>['client'];
let builder: TreeBuilder;

beforeAll(async () => {
  await migrateToLatest(TEST_DATABASE_URL);
  // the service's own definition, as main.ts runs it, with this process's key in place of the vault's signer
  audit = await startAudit({ env: { DATABASE_URL: TEST_DATABASE_URL, AUDIT_RECEIPTS: 'true', RECEIPT_MAX_MERGE_DELAY_SECONDS: '7200', RECEIPT_KEY_LIFETIME_HOURS: '1' }, overrides: { noteSigner: signer } });
  client = audit.client;
  builder = audit.api.builder;
});
afterAll(async () => {
  await audit.close();
});

const entry = (details: Record<string, unknown> = {}) => toAuditEntry(governedEntry({ params: { q: 'x' }, details: { stage: 'policy', ...details } }));
const delegations = () => signed.filter((h) => h === 'agw-receipt-key/v1').length;

it('answers every append with a receipt of its record, the key delegated once per tenant', async () => {
  const tenantId = randomUUID();
  const before = delegations();
  const argumentsSha256 = 'ab'.repeat(32);
  // concurrent first appends share one delegation
  const answers = await Promise.all([1, 2, 3, 4].map(() => client.appendStream({ tenant_id: tenantId, entry: entry({ arguments_sha256: argumentsSha256, decided_by: 'member:alice' }), event_kind: '', omit_entry: true, append_key: randomUUID() })));
  const later = await client.append({ tenant_id: tenantId, entry: entry(), event_kind: '', append_key: '' });
  expect(delegations() - before).toBe(1);
  for (const a of [...answers, later]) {
    const { results, receipt } = verifyReceipt({ receipt: a.receipt! }, vkeyOf(tenantId));
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(receipt!.record).toBe(Number(a.id));
    expect(receipt!.leafHex).toBe(createHash('sha256').update(Buffer.concat([Buffer.from([0]), Buffer.from(a.record_hash, 'hex')])).digest('hex'));
  }
  const first = verifyReceipt({ receipt: answers[0].receipt! }, vkeyOf(tenantId)).receipt!;
  expect(first).toMatchObject({ decision: 'allow', arguments: argumentsSha256, approver: 'member:alice', definition: '-', mmdSeconds: 7200 });
  expect(verifyReceipt({ receipt: later.receipt! }, vkeyOf(tenantId)).receipt).toMatchObject({ arguments: '-', approver: '-' });
  // another tenant's key does not verify it
  expect(verifyReceipt({ receipt: later.receipt! }, vkeyOf(randomUUID())).results.find((r) => !r.ok)?.name).toBe('delegation');
});

it('commits the record without a receipt when the key cannot be delegated (vault down)', async () => {
  const tenantId = randomUUID();
  vaultDown = true;
  try {
    const a = await client.append({ tenant_id: tenantId, entry: entry(), event_kind: '', append_key: '' });
    expect(a.id).toBe(1);
    expect(a.receipt).toBeUndefined();
    await expect(client.getReceipt({ tenant_id: tenantId, record_id: 1 })).rejects.toThrow(/vault/);
  } finally {
    vaultDown = false;
  }
  expect((await client.getReceipt({ tenant_id: tenantId, record_id: 1 })).note).toContain('record 1\n');
});

it('issues a receipt again, and gives the proof to the first signed checkpoint (pending before)', async () => {
  const tenantId = randomUUID();
  for (let i = 0; i < 3; i++) await client.append({ tenant_id: tenantId, entry: entry(), event_kind: '', append_key: '' });
  const again = await client.getReceipt({ tenant_id: tenantId, record_id: 2 });
  const pending = await client.getReceiptProof({ tenant_id: tenantId, record_id: 2 });
  expect(pending).toMatchObject({ status: 'pending', record_id: 2, leaf_index: 1, proof: [], checkpoint: '' });
  await builder.buildPending({ tenantId, builtBy: 'trigger', wait: true });
  for (let i = 0; i < 2; i++) await client.append({ tenant_id: tenantId, entry: entry(), event_kind: '', append_key: '' });
  await builder.buildPending({ tenantId, builtBy: 'trigger', wait: true });
  const p = await client.getReceiptProof({ tenant_id: tenantId, record_id: 2 });
  // the first checkpoint containing leaf 1 is the one of size 3, not the latest (5)
  expect(p).toMatchObject({ status: 'merged', tree_size: 3 });
  const proof = { status: 'merged' as const, record_id: Number(p.record_id), leaf_index: Number(p.leaf_index), leaf_hash: p.leaf_hash, tree_size: Number(p.tree_size), proof: p.proof, checkpoint: p.checkpoint };
  expect(verifyReceipt({ receipt: again, proof }, vkeyOf(tenantId)).results.filter((r) => !r.ok)).toEqual([]);
  // another tenant's record id is not found
  await expect(client.getReceipt({ tenant_id: randomUUID(), record_id: 2 })).rejects.toThrow(/No audit record 2/);
  await expect(client.getReceiptProof({ tenant_id: randomUUID(), record_id: 2 })).rejects.toThrow(/No audit record 2/);
});

describe('a vault that is slow or down costs no append a wait', () => {
  const record = { tenant_seq: 0, record_hash: 'ab'.repeat(32), decision: 'allow', tool: 't', method: 'm', bundle_revision: 'r', details: {} } as unknown as Parameters<Receipts['issue']>[1];

  it('waits at most delegationWaitMs for a delegation, once, and uses it as soon as it is signed', async () => {
    let release!: () => void;
    const slow: NoteSignerPort = { keyName: signer.keyName, sign: async (t, text) => (await new Promise<void>((r) => (release = r)), signer.sign(t, text)) };
    const receipts = new Receipts(slow, { mmdSeconds: 60, keyLifetimeMs: 3600_000, logger, delegationWaitMs: 100 });
    const tenantId = randomUUID();
    const t0 = Date.now();
    expect(await receipts.issue(tenantId, record)).toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(1000);
    // meanwhile no append waits again
    const t1 = Date.now();
    expect(await receipts.issue(tenantId, record)).toBeUndefined();
    expect(Date.now() - t1).toBeLessThan(50);
    release();
    await new Promise((r) => setTimeout(r, 10));
    expect((await receipts.issue(tenantId, record))?.note).toMatch(/^agw-receipt\/v1\n/);
  });

  it('after a failed delegation asks the vault again only after retryAfterMs (a read of a stored receipt asks at once)', async () => {
    let calls = 0;
    const down: NoteSignerPort = { keyName: signer.keyName, sign: async () => ((calls += 1), Promise.reject(new Error('vault unreachable'))) };
    let now = Date.now();
    const receipts = new Receipts(down, { mmdSeconds: 60, keyLifetimeMs: 3600_000, logger, retryAfterMs: 30_000, now: () => now });
    const tenantId = randomUUID();
    for (let i = 0; i < 5; i++) expect(await receipts.issue(tenantId, record)).toBeUndefined();
    expect(calls).toBe(1);
    expect(await receipts.issue(tenantId, record, { retryNow: true })).toBeUndefined();
    expect(calls).toBe(2);
    now += 31_000;
    await receipts.issue(tenantId, record);
    expect(calls).toBe(3);
  });
});
