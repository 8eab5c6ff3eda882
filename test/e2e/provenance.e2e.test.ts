/**
 * Provable audit through the public API only: governed calls, a triggered Merkle build and anchor,
 * an inclusion proof and a consistency proof checked with an independent RFC 9162 verifier written
 * here, the anchored root read back from the local chain with viem, and both export formats.
 */
import { createHash } from 'node:crypto';
import { createPublicClient, decodeEventLog, http, parseAbi } from 'viem';
import { type Tenant, api, call, newTenant, recordRaw } from './support/api';
import { E2E_BASE_URL, E2E_OFFSET } from './support/e2e-env';

// ---- an independent RFC 9162 verifier (not the service's code) ----
const H = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const leafHash = (leaf: Buffer) => H(Buffer.from([0]), leaf);
const nodeHash = (l: Buffer, r: Buffer) => H(Buffer.from([1]), l, r);
const hex = (s: string) => Buffer.from(s, 'hex');

/** RFC 9162 2.1.3.2 */
function inclusionRoot(leaf: Buffer, index: number, size: number, proof: Buffer[]): Buffer | null {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else r = nodeHash(r, p);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 2.1.4.2 */
function consistent(size1: number, size2: number, root1: Buffer, root2: Buffer, proof: Buffer[]): boolean {
  if (size1 === 0 || size1 > size2) return false;
  if (size1 === size2) return proof.length === 0 && root1.equals(root2);
  if (proof.length === 0) return false;
  const path = (size1 & (size1 - 1)) === 0 ? [root1, ...proof] : proof;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) [fn, sn] = [(fn - 1) / 2, Math.floor(sn / 2)];
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else sr = nodeHash(sr, c);
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 && fr.equals(root1) && sr.equals(root2);
}

const anchorAbi = parseAbi([
  'event RootAnchored(uint64 indexed sequence, bytes32 indexed root, uint64 leafCount, uint64 timestamp)',
  'function anchorOf(bytes32 root) view returns (uint64 timestamp, uint64 blockNumber, uint64 leafCount, uint64 sequence)',
]);
const chain = createPublicClient({ transport: http(`http://127.0.0.1:${8545 + E2E_OFFSET}`) });

async function records(t: Tenant): Promise<Array<{ id: number; record_hash: string }>> {
  const r = await api('GET', '/audit/log?limit=1000', { key: t.apiKey });
  expect(r.status).toBe(200);
  return [...r.body.records].reverse();
}

async function governedCalls(t: Tenant, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await call(t.apiKey, { params: { q: `provenance ${i}` } });
    // every decision (allowed, denied, queued, or refused while the policy engine is down) is audited
    expect([200, 202, 403, 502]).toContain(r.status);
  }
}

describe('provable audit (Merkle trees, anchoring, compliance export)', () => {
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant('Provenance A'), newTenant('Provenance B')]);
  });

  it('builds, anchors and proves: inclusion and consistency proofs verify independently, the root is on chain', async () => {
    // another tenant records first: a's record ids are its own all the same (1 for its first record)
    await governedCalls(await newTenant('Provenance noise'), 3);
    await governedCalls(a, 5);
    const first = await records(a);
    expect(first).toHaveLength(5);
    expect(first.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);

    // before any build: no tree, and a record's proof is a clear 409
    expect((await api('GET', '/audit/merkle/roots', { key: a.apiKey })).body).toEqual({ trees: [] });
    const early = await api('GET', `/audit/merkle/proof/${first[0].record_hash}`, { key: a.apiKey });
    expect(early.status).toBe(409);
    expect(String(early.body.detail)).toMatch(/not in a Merkle tree yet/);

    const t1 = await api('POST', '/anchor/trigger', { key: a.apiKey });
    expect(t1.status).toBe(200);
    expect(t1.body).toMatchObject({ status: 'anchored', tree_index: 0, tree_size: 5, network: 'local' });
    expect(t1.body.merkle_root).toMatch(/^[0-9a-f]{64}$/);
    expect(t1.body.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);

    await governedCalls(a, 4);
    const all = await records(a);
    expect(all).toHaveLength(9);
    expect(all.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const t2 = await api('POST', '/anchor/trigger', { key: a.apiKey });
    expect(t2.status).toBe(200);
    expect(t2.body).toMatchObject({ status: 'anchored', tree_index: 1, tree_size: 9 });

    const roots = await api('GET', '/audit/merkle/roots', { key: a.apiKey });
    expect(roots.status).toBe(200);
    expect(roots.body.trees).toHaveLength(2);
    const [tree0, tree1] = roots.body.trees;
    expect(tree0).toMatchObject({ tree_index: 0, record_count: 5, from_record_id: 1, to_record_id: 5, merkle_root: t1.body.tenant_root });
    expect(tree1).toMatchObject({ tree_index: 1, record_count: 9, records_added: 4, from_record_id: 6, to_record_id: 9, merkle_root: t2.body.tenant_root });
    for (const t of roots.body.trees) expect(Date.parse(t.period_end)).toBeGreaterThanOrEqual(Date.parse(t.period_start));

    // inclusion proof of the 3rd record against the latest tree head, verified here
    const proof = await api('GET', `/audit/merkle/proof/${all[2].record_hash}`, { key: a.apiKey });
    expect(proof.status).toBe(200);
    expect(proof.body).toMatchObject({ record_hash: all[2].record_hash, merkle_root: tree1.merkle_root, verified: true, record_id: 3, leaf_index: 2, tree_size: 9 });
    const computed = inclusionRoot(leafHash(hex(all[2].record_hash)), 2, 9, proof.body.proof.map(hex));
    expect(computed?.toString('hex')).toBe(tree1.merkle_root);
    // the same proof does not prove another record
    expect(inclusionRoot(leafHash(hex(all[3].record_hash)), 2, 9, proof.body.proof.map(hex))?.toString('hex')).not.toBe(tree1.merkle_root);

    // the same record against the first, already anchored tree head: record -> tree 0 root -> aggregate root of t1's transaction
    const anchoredProof = await api('GET', `/audit/merkle/proof/${all[2].record_hash}?tree_index=0`, { key: a.apiKey });
    expect(anchoredProof.status).toBe(200);
    expect(anchoredProof.body).toMatchObject({ merkle_root: tree0.merkle_root, tree_index: 0, tree_size: 5, verified: true, record_id: 3, leaf_index: 2 });
    expect(inclusionRoot(leafHash(hex(all[2].record_hash)), 2, 5, anchoredProof.body.proof.map(hex))?.toString('hex')).toBe(t1.body.tenant_root);
    const agg1 = t1.body.aggregate_proof;
    expect(inclusionRoot(leafHash(hex(agg1.leaf_hex)), agg1.leaf_index, agg1.tree_size, agg1.proof.map(hex))?.toString('hex')).toBe(t1.body.merkle_root);
    expect((await api('GET', `/audit/merkle/proof/${all[6].record_hash}?tree_index=0`, { key: a.apiKey })).status).toBe(409);
    const badIndex = await api('GET', `/audit/merkle/proof/${all[6].record_hash}?tree_index=abc`, { key: a.apiKey });
    expect(badIndex.status).toBe(422);
    expect(badIndex.body.detail[0].loc).toEqual(['query', 'tree_index']);

    // consistency proof: tree 0 is a prefix of tree 1, verified here
    const cons = await api('GET', '/audit/merkle/consistency/0/1', { key: a.apiKey });
    expect(cons.status).toBe(200);
    expect(cons.body).toMatchObject({ tree_n: 0, tree_m: 1, verified: true, first: { tree_size: 5, merkle_root: tree0.merkle_root }, second: { tree_size: 9, merkle_root: tree1.merkle_root } });
    expect(consistent(5, 9, hex(tree0.merkle_root), hex(tree1.merkle_root), cons.body.proof.map(hex))).toBe(true);
    expect(consistent(5, 9, hex(tree1.merkle_root), hex(tree0.merkle_root), cons.body.proof.map(hex))).toBe(false);

    // the tenant root leads to the anchored aggregate root, whose transaction is on the local chain
    const agg = t2.body.aggregate_proof;
    // leaf = tenant id || uint64 size || root || SHA-256 of the head's signed checkpoint note (docs/evidence.md)
    const cp9 = (await api('GET', '/audit/checkpoints/9', { key: a.apiKey })).body;
    expect(t2.body.checkpoint_sha256).toBe(createHash('sha256').update(cp9.checkpoint, 'utf8').digest('hex'));
    expect(agg.leaf_hex).toBe(`${a.tenantId.replace(/-/g, '')}${(9).toString(16).padStart(16, '0')}${tree1.merkle_root}${t2.body.checkpoint_sha256}`);
    expect(inclusionRoot(leafHash(hex(agg.leaf_hex)), agg.leaf_index, agg.tree_size, agg.proof.map(hex))?.toString('hex')).toBe(t2.body.merkle_root);
    const receipt = await chain.getTransactionReceipt({ hash: t2.body.tx_hash });
    expect(receipt.status).toBe('success');
    expect(receipt.to?.toLowerCase()).toBe(t2.body.contract_address.toLowerCase());
    const events = receipt.logs.map((l) => decodeEventLog({ abi: anchorAbi, data: l.data, topics: l.topics }));
    expect(events.map((e) => (e.args as { root: string }).root)).toContain(`0x${t2.body.merkle_root}`);
    const [timestamp, blockNumber] = await chain.readContract({ address: t2.body.contract_address, abi: anchorAbi, functionName: 'anchorOf', args: [`0x${t2.body.merkle_root}`] });
    expect(timestamp).toBeGreaterThan(0n);
    expect(Number(blockNumber)).toBe(t2.body.block_number);

    const verify = await api('GET', '/anchor/verify', { key: a.apiKey });
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ verified: true, on_chain_root: t2.body.merkle_root, local_root: t2.body.merkle_root, tx_hash: t2.body.tx_hash });

    const status = await api('GET', '/anchor/status', { key: a.apiKey });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ network: 'local', connected_chains: ['local'], contract_address: t2.body.contract_address, anchor_count: 2 });
    expect(status.body.last_anchor).toMatchObject({ merkle_root: t2.body.merkle_root, tx_hash: t2.body.tx_hash, block_number: t2.body.block_number });
    expect(Number.isNaN(Date.parse(status.body.last_anchor.anchored_at))).toBe(false);

    const health = await api('GET', '/health', { key: a.apiKey });
    expect(health.body.blockchain).toMatchObject({ status: 'ok', network: 'local', connected: true, contract_address: t2.body.contract_address });
    expect(health.body.merkle).toMatchObject({ status: 'ok' });
    expect(health.body.services).toMatchObject({ audit: 'ok', anchor: 'ok' });
    expect(health.body.merkle.tree_heads).toBeGreaterThanOrEqual(2);
  });

  it('keeps tenants apart and rejects bad input with precise 4xx', async () => {
    const mine = await records(a);
    expect((await api('GET', `/audit/merkle/proof/${mine[0].record_hash}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('GET', '/audit/merkle/roots', { key: b.apiKey })).body).toEqual({ trees: [] });
    expect((await api('GET', '/audit/merkle/consistency/0/1', { key: b.apiKey })).status).toBe(404);
    const bad = await api('GET', '/audit/merkle/proof/not-a-hash', { key: a.apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['path', 'record_hash']);
    expect((await api('GET', `/audit/merkle/proof/${'0'.repeat(64)}`, { key: a.apiKey })).status).toBe(404);
    const badTree = await api('GET', '/audit/merkle/consistency/x/1', { key: a.apiKey });
    expect(badTree.status).toBe(422);
    expect(badTree.body.detail[0].loc).toEqual(['path', 'tree_n']);
    expect((await api('GET', '/audit/merkle/consistency/1/0', { key: a.apiKey })).status).toBe(422);
    expect((await api('GET', '/audit/merkle/consistency/0/99', { key: a.apiKey })).status).toBe(404);
    expect((await api('GET', '/anchor/verify', { key: b.apiKey })).body).toMatchObject({ verified: false });
    expect((await api('POST', '/anchor/trigger', { key: b.apiKey })).status).toBe(409);
    expect((await api('GET', '/anchor/status')).status).toBe(401);
  });

  it('exports the compliance package as JSON and PDF; another tenant is a 404', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const json = await api('GET', `/compliance/export/${a.tenantId}?from=${day}&to=${day}&format=json`, { key: a.apiKey });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toContain('application/json');
    const pkg = json.body;
    expect(pkg.package).toMatchObject({ tenant_id: a.tenantId, format_version: '1.2' });
    expect(pkg.audit_records).toHaveLength(9);
    // the tenant's record ids, as the log shows them: id = leaf_index + 1
    expect(pkg.audit_records.map((r: { id: number; leaf_index: number }) => [r.id, r.leaf_index])).toEqual(Array.from({ length: 9 }, (_, i) => [i + 1, i]));
    expect(pkg.chain_verification).toMatchObject({ valid: true, record_count: 9 });
    expect(pkg.merkle.latest_tree).toMatchObject({ tree_index: 1, record_count: 9, from_record_id: 6, to_record_id: 9 });
    expect(pkg.merkle.trees_in_range.map((h: { from_record_id: number; to_record_id: number }) => [h.from_record_id, h.to_record_id])).toEqual([[1, 5], [6, 9]]);
    expect(pkg.anchors.status).toBe('ok');
    expect(pkg.anchors.references.map((r: { tree_index: number }) => r.tree_index)).toEqual([0, 1]);
    expect(pkg.anchors.references[0]).toHaveProperty('explorer_tx_url');
    expect(pkg.policy_snapshot).toHaveProperty('status');
    expect(pkg.sample_inclusion_proofs.length).toBeGreaterThan(0);
    for (const p of pkg.sample_inclusion_proofs) {
      expect(p.record_id).toBe(p.leaf_index + 1);
      expect(inclusionRoot(leafHash(hex(p.record_hash)), p.leaf_index, p.tree_size, p.proof.map(hex))?.toString('hex')).toBe(p.merkle_root);
    }

    const pdf = await fetch(`${E2E_BASE_URL}/compliance/export/${a.tenantId}?format=pdf`, { headers: { 'x-api-key': a.apiKey } });
    await recordRaw('GET', pdf.url, pdf);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.length).toBeGreaterThan(2000);

    expect((await api('GET', `/compliance/export/${a.tenantId}`, { key: b.apiKey })).status).toBe(404);
    expect((await api('GET', '/compliance/export/not-a-uuid', { key: a.apiKey })).status).toBe(404);
    const badFormat = await api('GET', `/compliance/export/${a.tenantId}?format=xml`, { key: a.apiKey });
    expect(badFormat.status).toBe(422);
    expect(badFormat.body.detail[0].loc).toEqual(['query', 'format']);
    const badDate = await api('GET', `/compliance/export/${a.tenantId}?from=last-week`, { key: a.apiKey });
    expect(badDate.status).toBe(422);
    expect(badDate.body.detail[0].loc).toEqual(['query', 'from']);
  });
});
