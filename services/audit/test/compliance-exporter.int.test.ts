/**
 * The compliance export against the real Postgres: the JSON package, and the PDF rendered to PNG with
 * pdftoppm (poppler-utils) to check its pages really carry text. Peer services (anchor, policy) are
 * given through their ports: one answering, one down.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Db, DependencyUnavailableError, createDb, createLogger, migrateToLatest } from '@agw/shared';
import { OCSF_PROFILES, OcsfSchema } from '@agw/ocsf';
import Ajv from 'ajv';
import { sql } from 'kysely';
import { AuditChain } from '../src/chain/audit-chain';
import { AuditRecordRepository } from '../src/chain/audit-record.repository';
import { MerkleProofs } from '../src/merkle/merkle-proofs';
import { MerkleRepository } from '../src/merkle/merkle.repository';
import { hashLeaf, recordLeafBytes, verifyInclusion } from '../src/merkle/rfc9162';
import { TreeBuilder } from '../src/merkle/tree-builder';
import { type AnchorReference, ComplianceExporter, parseBound } from '../src/export/compliance-exporter';
import { ExportRepository } from '../src/export/export.repository';
import { DecisionInputRepository } from '../src/chain/decision-input.repository';
import { decisionInputOf, governedEntry } from './support/entries';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agw_test';
let db: Db;
let chain: AuditChain;
let builder: TreeBuilder;
let proofs: MerkleProofs;
const tenant = randomUUID();
const anchorRef: AnchorReference = {
  tree_index: 0,
  tree_size: 12,
  tenant_root: 'aa'.repeat(32),
  aggregate_root: 'bb'.repeat(32),
  leaf_index: 0,
  leaf_count: 1,
  aggregate_proof: [],
  tx_hash: `0x${'cc'.repeat(32)}`,
  block_number: 7,
  anchored_at: new Date().toISOString(),
  network: 'polygon-amoy',
  chain_id: 80002,
  contract_address: `0x${'dd'.repeat(20)}`,
  explorer_tx_url: `https://amoy.polygonscan.com/tx/0x${'cc'.repeat(32)}`,
};

function exporter(policyUp: boolean, maxBytes = 12 * 1024 * 1024) {
  return new ComplianceExporter({
    chain,
    records: new ExportRepository(db),
    proofs,
    decisionInputs: new DecisionInputRepository(db),
    anchors: { listAnchors: async (t) => (t === tenant ? [anchorRef] : []) },
    policy: {
      snapshot: async () => {
        if (!policyUp) throw new DependencyUnavailableError('policy engine is unreachable');
        return { status: 'ok', policy_template: 'financial', policy_config: { transaction_limit: 100 }, bundle_revision: 'rev-9' };
      },
    },
    maxRecords: 10_000,
    sampleProofs: 3,
    maxBytes,
  });
}

beforeAll(async () => {
  await migrateToLatest(url);
  db = createDb(url);
  chain = new AuditChain(new AuditRecordRepository(db), { tamperDemo: false });
  const repo = new MerkleRepository(db);
  builder = new TreeBuilder(db, repo, { treeBuilt: async () => undefined }, createLogger('test', 'silent'));
  proofs = new MerkleProofs(repo);
  const other = randomUUID();
  for (let i = 0; i < 12; i++) {
    // another tenant appends in between: the exported tenant's record ids are still 1..12
    await chain.append(other, governedEntry());
    await chain.append(tenant, {
      action_id: randomUUID(),
      agent_id: `agent-${i % 3}`,
      agent_type: 'assistant',
      agent_version: '1.0.0',
      tool: i % 2 ? 'svc_send_email' : 'svc_web_search',
      method: 'run',
      params: { i },
      decision: i % 4 === 0 ? 'deny' : 'allow',
      violations: i % 4 === 0 ? ['consumer_email_blocked'] : [],
      severity: i % 4 === 0 ? 'high' : 'none',
      alert_tier: null,
      requires_human: false,
      execution_mode: null,
      source: 'mcp_governed',
      session_id: null,
      bundle_revision: 'rev-9',
      details: {},
      requested_at: new Date().toISOString(),
    });
  }
  await builder.buildPending({ tenantId: tenant, builtBy: 'trigger', wait: true });
});

afterAll(async () => {
  await db.destroy();
});

describe('compliance export', () => {
  it('packages records, chain verification, Merkle summary, anchors, verifiable sample proofs and the policy', async () => {
    const out = await exporter(true).export(tenant, { format: 'json' });
    expect(out.contentType).toBe('application/json');
    const pkg = JSON.parse(out.content.toString());
    expect(pkg.package).toMatchObject({ tenant_id: tenant, format_version: '1.2' });
    expect(pkg.audit_records).toHaveLength(12);
    // record ids are the tenant's: id = leaf_index + 1, 1..12
    expect(pkg.audit_records.map((r: { id: number }) => r.id)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const r of pkg.audit_records) expect(r.id).toBe(r.leaf_index + 1);
    expect(pkg.summary).toMatchObject({ total: 12, by_decision: { deny: 3, allow: 9 }, distinct_agents: 3, distinct_tools: 2, truncated: false });
    expect(pkg.chain_verification).toMatchObject({ valid: true, record_count: 12 });
    expect(pkg.merkle.latest_tree).toMatchObject({ tree_index: 0, record_count: 12, records_added: 12, from_record_id: 1, to_record_id: 12 });
    expect(pkg.merkle.trees_in_range).toEqual([pkg.merkle.latest_tree]);
    expect(pkg.anchors.references[0].explorer_tx_url).toContain('polygonscan');
    expect(pkg.policy_snapshot).toMatchObject({ status: 'ok', policy_template: 'financial', bundle_revision: 'rev-9' });
    expect(pkg.sample_inclusion_proofs).toHaveLength(3);
    expect(pkg.sample_inclusion_proofs.map((p: { record_id: number; leaf_index: number }) => [p.record_id, p.leaf_index])).toEqual([[1, 0], [7, 6], [12, 11]]);
    for (const p of pkg.sample_inclusion_proofs) {
      const ok = verifyInclusion(hashLeaf(recordLeafBytes(p.record_hash)), p.leaf_index, p.tree_size, p.proof.map((x: string) => Buffer.from(x, 'hex')), Buffer.from(p.merkle_root, 'hex'));
      expect(ok).toBe(true);
    }
  });

  it('exports the records as OCSF API Activity events (JSON Lines) that validate against the vendored OCSF schema', async () => {
    const out = await exporter(true).export(tenant, { format: 'ocsf' });
    expect(out.contentType).toBe('application/x-ndjson');
    expect(out.filename).toMatch(/\.ocsf\.jsonl$/);
    const events = out.content.toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(events).toHaveLength(12);
    const validate = new Ajv({ allErrors: true, strict: false }).compile(new OcsfSchema().eventSchema('events/application/api_activity.json', [...OCSF_PROFILES]));
    for (const e of events) expect([validate(e), validate.errors]).toEqual([true, null]);
    expect(events.map((e) => e.metadata.sequence)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(events.filter((e) => e.disposition_id === 2)).toHaveLength(3); // the 3 denies: Blocked
    expect(events.every((e) => e.class_uid === 6003 && e.metadata.tenant_uid === tenant && /^[0-9a-f]{64}$/.test(e.unmapped.record_hash))).toBe(true);
  });

  it('exports the policy decisions as OPA decision-log events (JSON Lines): one per decision the policy made, with its input, result and bundle revision', async () => {
    const t = randomUUID();
    const allowed = governedEntry({ params: { q: 'opa' }, bundle_revision: 'rev-9', session_id: 'sess-1' });
    await chain.append(t, allowed, { replay: { ...decisionInputOf(allowed), bundle_revision: 'rev-9', session_id: 'sess-1', evaluated_at: new Date('2026-11-29T01:02:03.456Z') } });
    const queued = governedEntry({ method: 'delete', decision: 'requires_human', requires_human: true, violations: ['deleting needs a human'], severity: 'medium', bundle_revision: 'rev-8', details: { upstream_connection: { mode: 'per_user', user_id: 'u-1' } } });
    await chain.append(t, queued, { replay: { ...decisionInputOf(queued), decision: 'requires_human', violations: ['deleting needs a human'], severity: 'medium', bundle_revision: 'rev-8', passes: 1, behavioral: null } });
    // the human's approval of the queued action and a gateway constraint's refusal: no policy decisions
    await chain.append(t, governedEntry({ action_id: queued.action_id, method: 'delete', decision: 'allow', bundle_revision: 'rev-8', details: { approval: 'approved' } }));
    await chain.append(t, governedEntry({ decision: 'deny', violations: ['blocked_domain'], bundle_revision: 'gateway-constraints' }));

    const out = await exporter(true).export(t, { format: 'opa' });
    expect(out.contentType).toBe('application/x-ndjson');
    expect(out.filename).toMatch(/\.opa-decisions\.jsonl$/);
    const text = out.content.toString();
    expect(text.endsWith('\n')).toBe(true);
    const events = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({
      decision_id: allowed.action_id,
      // the current revision (the snapshot's rev-9, template financial): its decision rule's path
      path: 'agw/financial/decision',
      input: { agent_id: 'agent-1', agent_type: 'assistant', agent_version: '1.0.0', tool: 'svc_web_search', method: 'search', params: { q: 'opa' }, pii_detected: false, session_id: 'sess-1', behavioral: { action_count_1h: 1 } },
      result: { decision: 'allow', violations: [], severity: 'none', requires_human: false, passes: 2 },
      timestamp: '2026-11-29T01:02:03.456Z',
      bundles: { gateway: { revision: 'rev-9' } },
      labels: { app: 'agw', id: t, version: expect.stringMatching(/^\d+\.\d+\.\d+/) },
    });
    // an earlier revision's template is not known: the root of the policy packages
    expect(events[1]).toMatchObject({
      decision_id: queued.action_id,
      path: 'agw',
      input: { method: 'delete', upstream: { connection: { mode: 'per_user', user_id: 'u-1' } } },
      result: { decision: 'requires_human', violations: ['deleting needs a human'], severity: 'medium', requires_human: true, passes: 1 },
      bundles: { gateway: { revision: 'rev-8' } },
    });
    expect(events[1].input).not.toHaveProperty('behavioral');
    // another tenant's export has none of them
    expect((await exporter(true).export(randomUUID(), { format: 'opa' })).content.toString()).toBe('');
  });

  it('keeps exporting when the policy service is down, and honours the date range', async () => {
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const pkg = await exporter(false).build(tenant, { from: '2020-01-01', to: twoDaysAgo });
    expect(pkg.audit_records).toHaveLength(0);
    expect(pkg.policy_snapshot).toMatchObject({ status: 'unavailable' });
    expect(pkg.chain_verification).toMatchObject({ valid: true });
  });

  it('lists fewer records when the document would exceed the size limit, and says so', async () => {
    const full = (await exporter(true).export(tenant, { format: 'json' })).content.length;
    const out = await exporter(true, Math.floor(full * 0.6)).export(tenant, { format: 'json' });
    expect(out.content.length).toBeLessThanOrEqual(Math.floor(full * 0.6));
    const pkg = JSON.parse(out.content.toString());
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

  it('renders a PDF whose pages carry text (rendered to PNG with pdftoppm)', async () => {
    const out = await exporter(true).export(tenant, { format: 'pdf' });
    expect(out.contentType).toBe('application/pdf');
    expect(out.content.subarray(0, 5).toString()).toBe('%PDF-');
    const dir = mkdtempSync(path.join(tmpdir(), 'agw-pdf-'));
    try {
      const file = path.join(dir, 'export.pdf');
      writeFileSync(file, out.content);
      execFileSync('pdftoppm', ['-png', '-r', '40', file, path.join(dir, 'page')]);
      const pngs = readdirSync(dir).filter((f) => f.endsWith('.png'));
      expect(pngs.length).toBeGreaterThanOrEqual(2);
      expect(readFileSync(path.join(dir, pngs[0])).subarray(1, 4).toString()).toBe('PNG');
      // the same pages as greyscale pixels: the summary page must have ink (text), not only white
      execFileSync('pdftoppm', ['-gray', '-r', '40', '-f', '2', '-l', '2', file, path.join(dir, 'gray')]);
      const pgm = readFileSync(path.join(dir, readdirSync(dir).find((f) => f.startsWith('gray'))!));
      const header = pgm.subarray(0, 20).toString('latin1').split(/\s+/);
      const [w, h] = [Number(header[1]), Number(header[2])];
      const pixels = pgm.subarray(pgm.length - w * h);
      const dark = pixels.filter((v) => v < 128).length;
      expect(dark).toBeGreaterThan(200);
      const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
      expect(text).toContain('Compliance Export');
      expect(text).toContain('Summary statistics');
      expect(text).toContain(tenant);
      expect(text).toContain('Sample inclusion proofs');
      expect(text).toContain(`page 1 of ${pngs.length}`);
      // the tenant's record ids: samples, the tree head's range, the records table
      expect(text).toContain('Record 1 (leaf 0 of tree 0, 12 leaves): verified');
      expect(text).toContain('Record 12 (leaf 11 of tree 0, 12 leaves): verified');
      expect(text).toMatch(/1–12/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the first failing record of a broken chain by its tenant record id, in the JSON and the PDF', async () => {
    const { decision } = await db.selectFrom('audit_records').select('decision').where('tenant_id', '=', tenant).where('tenant_seq', '=', 4).executeTakeFirstOrThrow();
    await sql`UPDATE audit_records SET decision = 'tampered' WHERE tenant_id = ${tenant} AND tenant_seq = 4`.execute(db);
    try {
      const pkg = JSON.parse((await exporter(true).export(tenant, { format: 'json' })).content.toString());
      expect(pkg.chain_verification).toMatchObject({ valid: false, record_count: 4, failed_at_record_id: 5, failed_at_action_id: pkg.audit_records[4].action_id });
      const dir = mkdtempSync(path.join(tmpdir(), 'agw-pdf-'));
      try {
        const file = path.join(dir, 'broken.pdf');
        writeFileSync(file, (await exporter(true).export(tenant, { format: 'pdf' })).content);
        const text = execFileSync('pdftotext', ['-layout', file, '-']).toString();
        expect(text).toContain(`BROKEN at record 5 (action ${pkg.audit_records[4].action_id}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await sql`UPDATE audit_records SET decision = ${decision} WHERE tenant_id = ${tenant} AND tenant_seq = 4`.execute(db);
    }
    expect((await exporter(true).build(tenant, {})).chain_verification).toMatchObject({ valid: true, record_count: 12 });
  });
});
