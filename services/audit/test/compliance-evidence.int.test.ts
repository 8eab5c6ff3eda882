/**
 * The audit part of the compliance export against the real Postgres: records of the range with the tenant's
 * record ids, summary, chain verification, Merkle summary, verifiable sample proofs, the replay inputs of
 * format=opa, and the cut to EXPORT_MAX_BYTES. The gateway adds anchors and the policy snapshot and renders
 * the formats (services/gateway/src/compliance/compliance-export.test.ts; end to end: test/e2e
 * provenance, evidence, ocsf-export).
 */
import { randomUUID } from 'node:crypto';
import { type Db, type DecisionInputRow, createLogger, openTestDb } from '@agw/shared';
import { sql } from 'kysely';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { MerkleProofs } from '../src/merkle/merkle-proofs';
import { MerkleRepository } from '../src/merkle/merkle.repository';
import { hashLeaf, recordLeafBytes, verifyInclusion } from '../src/merkle/rfc9162';
import { TreeBuilder } from '../src/merkle/tree-builder';
import { ComplianceEvidence, parseBound } from '../src/export/compliance-evidence';
import { ExportRepository } from '../src/export/export.repository';
import { DecisionInputRepository } from '../src/chain/decision-input.repository';
import { decisionInputOf, governedEntry } from './support/entries';
import { evidenceSampleCall } from './support/evidence-sample';

let db: Db;
let chain: AuditChain;
let builder: TreeBuilder;
let proofs: MerkleProofs;
const tenant = randomUUID();

function evidence(maxBytes = 12 * 1024 * 1024) {
  return new ComplianceEvidence({
    chain,
    records: new ExportRepository(db),
    proofs,
    decisionInputs: new DecisionInputRepository(db),
    maxRecords: 10_000,
    sampleProofs: 3,
    maxBytes,
  });
}

beforeAll(async () => {
  db = await openTestDb();
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  const repo = new MerkleRepository(db);
  builder = new TreeBuilder(db, repo, { treeBuilt: async () => undefined }, createLogger('test', 'silent'));
  proofs = new MerkleProofs(repo);
  const other = randomUUID();
  for (let i = 0; i < 12; i++) {
    // another tenant appends in between: the exported tenant's record ids are still 1..12
    await chain.append(other, governedEntry());
    await chain.append(tenant, { action_id: randomUUID(), ...evidenceSampleCall(i), requested_at: new Date().toISOString() });
  }
  await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
});

afterAll(async () => {
  await db.destroy();
});

describe('the audit part of the compliance export', () => {
  it('packages records, chain verification, Merkle summary and verifiable sample proofs, in the document’s order, without the other services’ sections', async () => {
    const out = await evidence().evidence(tenant, { inputs: false });
    expect(out.decisionInputsJson.length).toBe(0);
    const pkg = JSON.parse(out.packageJson.toString());
    expect(Object.keys(pkg)).toEqual(['package', 'summary', 'audit_records', 'chain_verification', 'merkle', 'sample_inclusion_proofs', 'evidence']);
    expect(pkg.package).toMatchObject({ tenant_id: tenant, format_version: '1.2' });
    expect(pkg.audit_records).toHaveLength(12);
    // record ids are the tenant's: id = leaf_index + 1, 1..12
    expect(pkg.audit_records.map((r: { id: number }) => r.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const r of pkg.audit_records) expect(r.id).toBe(r.leaf_index + 1);
    expect(pkg.summary).toMatchObject({ total: 12, by_decision: { deny: 3, allow: 9 }, distinct_agents: 3, distinct_tools: 2, truncated: false });
    expect(pkg.chain_verification).toMatchObject({ valid: true, record_count: 12 });
    expect(pkg.merkle.latest_tree).toMatchObject({ tree_index: 0, record_count: 12, records_added: 12, from_record_id: 1, to_record_id: 12 });
    expect(pkg.merkle.trees_in_range).toEqual([pkg.merkle.latest_tree]);
    expect(pkg.sample_inclusion_proofs).toHaveLength(3);
    expect(pkg.sample_inclusion_proofs.map((p: { record_id: number; leaf_index: number }) => [p.record_id, p.leaf_index])).toEqual([[1, 0], [7, 6], [12, 11]]);
    for (const p of pkg.sample_inclusion_proofs) {
      const ok = verifyInclusion(hashLeaf(recordLeafBytes(p.record_hash)), p.leaf_index, p.tree_size, p.proof.map((x: string) => Buffer.from(x, 'hex')), Buffer.from(p.merkle_root, 'hex'));
      expect(ok).toBe(true);
    }
    // no signer configured here: the evidence says so; `chain` (from the anchors) is the gateway's to add
    expect(pkg.evidence).toMatchObject({ status: 'unavailable', checkpoints: [], tree_heads: [{ tree_index: 0, tree_size: 12 }] });
    expect(pkg.evidence).not.toHaveProperty('chain');
  });

  it('answers the replay inputs of the listed records’ actions with format=opa, as stored', async () => {
    const t = randomUUID();
    const allowed = governedEntry({ params: { q: 'opa' }, bundle_revision: 'rev-9', session_id: 'sess-1' });
    await chain.append(t, allowed, { replay: { ...decisionInputOf(allowed), bundle_revision: 'rev-9', session_id: 'sess-1', evaluated_at: new Date('2026-11-29T01:02:03.456Z') } });
    const queued = governedEntry({ method: 'delete', decision: 'requires_human', requires_human: true, violations: ['deleting needs a human'], severity: 'medium', bundle_revision: 'rev-8' });
    await chain.append(t, queued, { replay: { ...decisionInputOf(queued), decision: 'requires_human', violations: ['deleting needs a human'], severity: 'medium', bundle_revision: 'rev-8', passes: 1, behavioral: null } });
    await chain.append(t, governedEntry({ decision: 'deny', violations: ['blocked_domain'], bundle_revision: 'gateway-constraints' }));

    const out = await evidence().evidence(t, { inputs: true });
    const inputs = JSON.parse(out.decisionInputsJson.toString()) as Array<DecisionInputRow & { evaluated_at: string }>;
    expect(inputs.map((i) => i.action_id).sort()).toEqual([allowed.action_id, queued.action_id].sort());
    expect(inputs.find((i) => i.action_id === allowed.action_id)).toMatchObject({ session_id: 'sess-1', stored_params: { q: 'opa' }, behavioral: { action_count_1h: 1 }, bundle_revision: 'rev-9', evaluated_at: '2026-11-29T01:02:03.456Z', passes: 2 });
    expect(inputs.find((i) => i.action_id === queued.action_id)).toMatchObject({ decision: 'requires_human', behavioral: null, passes: 1 });
    // another tenant's answer has none of them
    expect((await evidence().evidence(randomUUID(), { inputs: true })).decisionInputsJson.toString()).toBe('[]');
  });

  it('honours the date range', async () => {
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const pkg = await evidence().build(tenant, { from: '2020-01-01', to: twoDaysAgo });
    expect(pkg.audit_records).toHaveLength(0);
    expect(pkg.package.range).toEqual({ from: '2020-01-01T00:00:00.000Z', to: new Date(Date.parse(twoDaysAgo) + 86_400_000).toISOString() });
    expect(pkg.chain_verification).toMatchObject({ valid: true });
  });

  it('lists fewer records when the answer would exceed the size limit, and says so', async () => {
    const full = (await evidence().evidence(tenant, { inputs: false })).packageJson.length;
    const out = await evidence(Math.floor(full * 0.6)).evidence(tenant, { inputs: false });
    expect(out.packageJson.length).toBeLessThanOrEqual(Math.floor(full * 0.6));
    const pkg = JSON.parse(out.packageJson.toString());
    expect(pkg.summary.total).toBe(12);
    expect(pkg.summary.truncated).toBe(true);
    expect(pkg.audit_records.length).toBe(pkg.summary.records_exported);
    expect(pkg.audit_records.length).toBeLessThan(12);
  });

  it('rejects bad dates with a 422 naming the parameter', () => {
    expect(() => parseBound('yesterday', 'from')).toThrow(expect.objectContaining({ code: 'invalid_input', detail: [expect.objectContaining({ loc: ['query', 'from'] })] }));
    expect(() => parseBound('2026-13-45', 'to')).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(parseBound('2026-11-21', 'to')?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    // days that do not exist are refused, not rolled over into the next month (found by R4)
    for (const v of ['2020-02-30', '2021-02-29', '2026-04-31T10:00:00Z'])
      expect(() => parseBound(v, 'from')).toThrow(expect.objectContaining({ code: 'invalid_input', detail: [expect.objectContaining({ loc: ['query', 'from'] })] }));
    expect(parseBound('2024-02-29', 'from')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  it('names the first failing record of a broken chain by its tenant record id', async () => {
    const { decision } = await db.selectFrom('audit_records').select('decision').where('tenant_id', '=', tenant).where('tenant_seq', '=', 4).executeTakeFirstOrThrow();
    await sql`UPDATE audit_records SET decision = 'tampered' WHERE tenant_id = ${tenant} AND tenant_seq = 4`.execute(db);
    try {
      const pkg = JSON.parse((await evidence().evidence(tenant, { inputs: false })).packageJson.toString());
      expect(pkg.chain_verification).toMatchObject({ valid: false, record_count: 4, failed_at_record_id: 5, failed_at_action_id: pkg.audit_records[4].action_id });
    } finally {
      await sql`UPDATE audit_records SET decision = ${decision} WHERE tenant_id = ${tenant} AND tenant_seq = 4`.execute(db);
    }
    expect((await evidence().build(tenant, {})).chain_verification).toMatchObject({ valid: true, record_count: 12 });
  });
});
